import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Duration, DurationSchema } from "@bufbuild/protobuf/wkt";

/** A duration as a form holds it: a whole number of one unit, as typed. */
export interface DurationValue {
  amount: string;
  unit: DurationUnit;
}

export type DurationUnit = "s" | "min" | "h";

export const DURATION_UNITS: readonly { key: DurationUnit; label: string }[] = [
  { key: "h", label: "hours" },
  { key: "min", label: "minutes" },
  { key: "s", label: "seconds" },
];

const SECONDS: Record<DurationUnit, number> = { s: 1, min: 60, h: 3600 };

/** A resolved duration in the largest unit it is a whole number of (18 h, not 64800 s). */
export function durationToForm(d: Duration | undefined): DurationValue {
  const seconds = Number(d?.seconds ?? 0n);
  const unit = DURATION_UNITS.find((u) => seconds % SECONDS[u.key] === 0)!.key;
  return { amount: String(seconds / SECONDS[unit]), unit };
}

export function durationFromForm(v: DurationValue): MessageInitShape<typeof DurationSchema> {
  return { seconds: BigInt(Number(v.amount) * SECONDS[v.unit]) };
}

/** The API's bounds of a duration setting: whole seconds from 0 to `maxHours`. */
export function checkDuration(v: DurationValue, maxHours: number): true | string {
  if (!/^\d{1,9}$/.test(v.amount.trim())) return "A whole number, 0 or more.";
  return Number(v.amount) * SECONDS[v.unit] <= maxHours * 3600 || `At most ${maxHours} hours.`;
}
