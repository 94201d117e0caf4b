import { State } from "../../../../gen/platform/resources/object/v3alpha/object_pb";

/**
 * What the forms of both families hold besides their own kind's settings: a description, the
 * kind, and an endpoint's URL (`http`, the kind both families have).
 */
export interface CommonValues {
  description: string;
  kind: string;
  url: string;
}

const httpKind = (v: CommonValues) => ({ case: "http" as const, value: { url: v.url.trim() } });

/** A create request's provider: the family's own kind as `own` makes it, or an endpoint. */
export function providerOf<Own>(v: CommonValues, own: () => Own) {
  return { description: v.description.trim(), kind: v.kind === "http" ? httpKind(v) : own() };
}

/**
 * A patch from the saved values to these: a changed description, and a changed kind as `own`
 * makes it (undefined: nothing changed), or an endpoint's. A new URL needs a new signing key
 * (a key signs for one URL only); a provider that becomes an endpoint gets one anyway.
 */
export function patchOf<Own>(saved: CommonValues, v: CommonValues, own: () => Own | undefined) {
  const description = v.description.trim() !== saved.description ? { description: v.description.trim() } : {};
  if (v.kind !== "http") {
    const kind = own();
    return kind ? { ...description, kind } : description;
  }
  if (saved.kind === "http" && v.url.trim() === saved.url) return description;
  return { ...description, kind: httpKind(v), regenerateSigningKey: saved.kind === "http" };
}

/** The settings among `next` that differ from `before`: what a patch of the same kind carries. */
export function changed<T extends object>(before: T, next: T): Partial<T> {
  return Object.fromEntries(Object.entries(next).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(before[key as keyof T]))) as Partial<T>;
}

/** A provider of either family in a few words: how it sends (SMTP, Twilio, an endpoint), where (a host, a sender, a URL), and whether it is the active one. */
export interface ProviderRow {
  id: string;
  description: string;
  kind: string;
  where: string;
  endpoint: boolean;
  active: boolean;
}

/** A read provider as a row; `own` says how its family's own kind sends. */
export function rowOf(
  p: { details?: { id: string }; description: string; state: State; kind: { case: string | undefined; value?: unknown } },
  own: () => { kind: string; where: string },
): ProviderRow {
  const common = { id: p.details?.id ?? "", description: p.description, active: p.state === State.EFFECTIVE_STATE_ACTIVE };
  if (p.kind.case === "http") return { ...common, kind: "Endpoint", where: (p.kind.value as { url: string }).url, endpoint: true };
  return { ...common, ...own(), endpoint: false };
}
