import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Duration, DurationSchema } from "@bufbuild/protobuf/wkt";
// Named with .js, as Node resolves them: the unit tests import this module (test/unit/console-settings.test.ts).
import type { Owner } from "../../../../gen/platform/object/v3alpha/object_pb.js";
import { durationFromForm, durationToForm, type DurationValue } from "./duration.js";

/**
 * Every settings page works the same way (platform/settings/object/v3alpha): each property
 * of a Resolved message becomes a form value, and a saved form sends a Set message with only
 * the properties whose value differs from the one in effect, so the ones left alone stay
 * inherited; a Reset sends one property's reset. One description per setting says how.
 *
 * Descriptions rather than a bare comparison of form values: the language settings have a
 * Set message of their own (a key, a list, an empty one resets), and durations, enum lists
 * and passkeys change shape between the form and the API; a comparison of form values alone
 * cannot send those, while branding and message texts need only a few lines of descriptions.
 *
 * Values are compared as the API would receive them (each description's `write`), so what
 * differs only as typed changes nothing: " 3 " and 3, 90 minutes and 5400 seconds, #ABCDEF
 * and #abcdef. Lists compare as sets: every list on these pages is a group of check boxes,
 * whose order is the order they were ticked in, which no page shows.
 */

/** A property of a Resolved message: its value, and where it comes from unless set in the context asked. */
export interface ResolvedSetting {
  value?: unknown;
  owner?: Owner;
}

/** One setting: its name in words, where it may be set, and how it goes to the form and back. */
export interface Setting<F, V> {
  label: string;
  /** Whether an organization may set it; otherwise only the instance (and the system). */
  inOrgs: boolean;
  read(value: V): F;
  /** The Set message's property that sets the form's value. */
  write(value: F): object;
  /** The Set message's property that removes the context's own value. */
  reset: object;
}

export type Settings<Values> = { [K in keyof Values]: Setting<Values[K], never> };

/** A Resolved message's properties, as far as a form of `Values` reads them. */
export type Resolved<Values> = { [K in keyof Values]?: ResolvedSetting };

const RESET = { change: { case: "reset", value: true } };

/** A setting whose Set message is the usual `set` or `reset` (settings/object/v3alpha). */
export function setOrReset<F, V, S>(read: (value: V) => F, set: (value: F) => S) {
  return (label: string, { inOrgs = true } = {}): Setting<F, V> => ({
    label,
    inOrgs,
    read,
    write: (value) => ({ change: { case: "set", value: set(value) } }),
    reset: RESET,
  });
}

export const flagSetting = setOrReset<boolean, boolean | undefined, boolean>(Boolean, (on) => on);
export const countSetting = setOrReset<string, number | undefined, number>(
  (n) => String(n ?? 0),
  (typed) => Number(typed.trim()),
);
export const textSetting = setOrReset<string, string | undefined, string>(
  (s) => s ?? "",
  (typed) => typed.trim(),
);
export const durationSetting = setOrReset<DurationValue, Duration | undefined, MessageInitShape<typeof DurationSchema>>(durationToForm, durationFromForm);

/** A set of enum values, ticked as strings (ChoiceInputs), sent as `{set: {types}}`. */
export const typesSetting = setOrReset<string[], number[] | undefined, { types: number[] }>(
  (types) => (types ?? []).map(String),
  (ticked) => ({ types: ticked.map(Number) }),
);

const names = <Values>(settings: Settings<Values>) => Object.keys(settings) as (keyof Values & string)[];

/** The form's values for what the API resolved. */
export function formValues<Values>(settings: Settings<Values>, resolved: Resolved<Values>): Values {
  const values: Partial<Values> = {};
  for (const name of names(settings)) values[name] = settings[name].read(resolved[name]?.value as never);
  return values as Values;
}

/** The Set message's properties whose form value differs from the value in effect, and no others. */
export function changedSettings<Values>(settings: Settings<Values>, values: Values, resolved: Resolved<Values>): Record<string, object> {
  const inEffect = formValues(settings, resolved);
  const change: Record<string, object> = {};
  for (const name of names(settings)) {
    const written = settings[name].write(values[name]);
    if (!sameValue(written, settings[name].write(inEffect[name]))) change[name] = written;
  }
  return change;
}

/** The Set message's properties that take one setting's own value away: the parent's applies again. */
export function settingReset<Values>(settings: Settings<Values>, name: keyof Values & string): Record<string, object> {
  return { [name]: settings[name].reset };
}

/** Equal by value: primitives (a duration's bigint seconds too), objects property by property, lists as sets (each member matched once). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && sameMembers(a, b);
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => key in b && sameValue(a[key as keyof typeof a], b[key as keyof typeof b]));
}

function sameMembers(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  const unmatched = [...b];
  for (const member of a) {
    const match = unmatched.findIndex((other) => sameValue(member, other));
    if (match < 0) return false;
    unmatched.splice(match, 1);
  }
  return true;
}
