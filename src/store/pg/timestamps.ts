import pg from "pg";

export const TIMESTAMPTZ = 1184;
/** pg's own parser of the type (postgres-date). */
const parsePostgresDate = pg.types.getTypeParser(TIMESTAMPTZ, "text") as (text: string) => Date | number | null;

/**
 * PostgreSQL's text form of a timestamptz (DateStyle ISO) as a Date, read by position:
 * `YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM[:SS]]`. pg's own parser (postgres-date) runs an
 * unanchored regular expression and a second one for the zone: a 100-row search spent a
 * tenth of its CPU there (docs/benchmarks.md). Anything else — years before 100 or after
 * 9999, BC, ±infinity — goes to postgres-date, so the results are the same; sub-millisecond
 * digits are dropped as there.
 */
export function parseTimestamptz(text: string): Date | number | null {
  const n = text.length;
  if (
    n < 22 ||
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 32 ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58
  ) {
    return parsePostgresDate(text);
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === 46) {
    i++;
    let scale = 100;
    while (i < n && isDigit(text.charCodeAt(i))) {
      ms += (text.charCodeAt(i) - 48) * scale;
      scale /= 10;
      i++;
    }
    ms = Math.trunc(ms);
  }
  const sign = text.charCodeAt(i);
  if (year < 100 || Number.isNaN(year + month + day + hour + minute + second) || (sign !== 43 && sign !== 45)) return parsePostgresDate(text);
  const offset = zoneSeconds(text, i + 1);
  if (offset === undefined) return parsePostgresDate(text);
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  return new Date(sign === 45 ? utc + offset * 1000 : utc - offset * 1000);
}

/** `HH`, `HH:MM` or `HH:MM:SS` up to the end of the text, in seconds; undefined when it is not that. */
function zoneSeconds(text: string, at: number): number | undefined {
  const rest = text.length - at;
  if (rest !== 2 && rest !== 5 && rest !== 8) return undefined;
  let seconds = digits(text, at, 2) * 3600;
  if (rest >= 5) seconds += text.charCodeAt(at + 2) === 58 ? digits(text, at + 3, 2) * 60 : NaN;
  if (rest === 8) seconds += text.charCodeAt(at + 5) === 58 ? digits(text, at + 6, 2) : NaN;
  return Number.isNaN(seconds) ? undefined : seconds;
}

/** The decimal number of `count` digits at `at`; NaN when one is not a digit. */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const code = text.charCodeAt(i);
    if (!isDigit(code)) return NaN;
    value = value * 10 + code - 48;
  }
  return value;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
