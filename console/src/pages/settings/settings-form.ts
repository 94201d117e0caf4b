import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Duration, DurationSchema } from "@bufbuild/protobuf/wkt";
import type { Owner } from "../../../../gen/platform/object/v3alpha/object_pb";
import { durationFromForm, durationToForm, type DurationValue } from "./duration";

/**
 * Every settings page works the same way: each property of a Resolved message becomes a
 * form value, and a saved form sends a Set message with only the properties the person
 * changed, so the ones left alone stay inherited. One description per setting says how.
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

const RESET = { change: { case: "reset", value: true } };

/** A setting whose Set message is the usual `set` or `reset` (settings/object/v3alpha). */
export function setOrReset<F, V, S>(read: (value: V) => F, set: (value: F) => S) {
  return (label: string, { inOrgs = true } = {}): Setting<F, V> => ({ label, inOrgs, read, write: (value) => ({ change: { case: "set", value: set(value) } }), reset: RESET });
}

export const flagSetting = setOrReset<boolean, boolean | undefined, boolean>(Boolean, (on) => on);
export const countSetting = setOrReset<string, number | undefined, number>((n) => String(n ?? 0), (typed) => Number(typed.trim()));
export const textSetting = setOrReset<string, string | undefined, string>((s) => s ?? "", (typed) => typed.trim());
export const durationSetting = setOrReset<DurationValue, Duration | undefined, MessageInitShape<typeof DurationSchema>>(durationToForm, durationFromForm);

/** A set of enum values, ticked as strings (ChoiceInputs), sent as `{set: {types}}`. */
export const typesSetting = setOrReset<string[], number[] | undefined, { types: number[] }>(
  (types) => (types ?? []).map(String),
  (ticked) => ({ types: ticked.map(Number) }),
);

/** The form's values for what the API resolved. */
export function formValues<Values>(settings: Settings<Values>, resolved: Record<string, ResolvedSetting | undefined>): Values {
  const values: Partial<Values> = {};
  for (const name of Object.keys(settings) as (keyof Values & string)[]) values[name] = settings[name].read(resolved[name]?.value as never);
  return values as Values;
}

/** react-hook-form's dirty marks of one value: true, or nested ones for an object or a list. */
function isDirty(mark: unknown): boolean {
  if (mark === true) return true;
  return typeof mark === "object" && mark !== null && Object.values(mark).some(isDirty);
}

/** The Set message's properties for the values the person changed, and no others. */
export function changedSettings<Values>(settings: Settings<Values>, values: Values, dirty: object): Record<string, object> {
  const change: Record<string, object> = {};
  for (const name of Object.keys(settings) as (keyof Values & string)[]) {
    if (isDirty((dirty as Record<string, unknown>)[name])) change[name] = settings[name].write(values[name]);
  }
  return change;
}
