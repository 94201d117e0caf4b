import type { SupportedLanguage } from "../../../domain/settings/language.js";

const UNITS = [
  ["day", 86_400],
  ["hour", 3_600],
] as const;

/**
 * How long a code or link stays valid, worded for a message's `{{.ExpiresIn}}`: "1 hour",
 * "10 Minuten", "2天". Whole days or hours when the duration is one, else whole minutes
 * (rounded down, at least one): a reader does not get less time than the message says.
 */
export function expiresIn(language: SupportedLanguage, seconds: number): string {
  const [unit, count] = UNITS.map(([u, size]) => [u, seconds / size] as const).find(([, n]) => n >= 1 && Number.isInteger(n)) ?? [
    "minute",
    Math.max(1, Math.floor(seconds / 60)),
  ];
  return new Intl.NumberFormat(language, { style: "unit", unit, unitDisplay: "long" }).format(count);
}
