import pg from "pg";
import { describe, expect, it } from "vitest";
import { parseTimestamptz, TIMESTAMPTZ } from "../../src/store/pg/timestamps.js";

/** pg's own parser, which ours must equal on every input. */
const reference = pg.types.getTypeParser(TIMESTAMPTZ, "text") as (text: string) => Date | number | null;

const same = (text: string) => {
  const ours = parseTimestamptz(text);
  const theirs = reference(text);
  expect(ours instanceof Date ? ours.getTime() : ours, text).toEqual(theirs instanceof Date ? theirs.getTime() : theirs);
};

describe("the timestamptz parser of the pg pool", () => {
  it("reads what PostgreSQL writes as pg's parser does: fractions of any length, zones of hours, minutes and seconds", () => {
    for (const text of [
      "2026-11-27 11:20:10.599123+00",
      "2026-11-27 11:20:10+00",
      "2026-11-27 11:20:10.5+00",
      "2026-11-27 11:20:10.05+00",
      "2026-11-27 11:20:10.0009+00",
      "2026-01-01 00:00:00.999999+00",
      "2026-11-27 11:20:10.599123+05:30",
      "2026-11-27 11:20:10.599123-08",
      "1883-11-18 12:03:58-04:56:02",
      "2024-02-29 23:59:59.123+14",
      "1970-01-01 00:00:00+00",
    ]) {
      same(text);
    }
    expect((parseTimestamptz("2026-11-27 11:20:10.599123+05:30") as Date).toISOString()).toBe("2026-11-27T05:50:10.599Z");
  });

  it("hands what it does not read by position to pg's parser: BC, years before 100 and after 9999, infinity", () => {
    for (const text of ["0044-03-15 12:00:00+00", "0044-03-15 12:00:00+00 BC", "12345-01-01 00:00:00+00", "infinity", "-infinity", "2026-11-27 11:20:10.5Z"]) {
      same(text);
    }
    expect(parseTimestamptz("infinity")).toBe(Infinity);
  });

  it("equals pg's parser on random instants and zones", () => {
    for (let i = 0; i < 2000; i++) {
      const at = new Date(Date.UTC(100, 0, 1) + Math.random() * (Date.UTC(9999, 0, 1) - Date.UTC(100, 0, 1)));
      const zone = Math.floor(Math.random() * 28) - 14;
      const local = new Date(at.getTime() + zone * 3_600_000);
      const iso = local.toISOString();
      const fraction = String(Math.floor(Math.random() * 1_000_000))
        .padStart(6, "0")
        .slice(0, 1 + Math.floor(Math.random() * 6));
      const sign = zone < 0 ? "-" : "+";
      same(`${iso.slice(0, 10)} ${iso.slice(11, 19)}.${fraction}${sign}${String(Math.abs(zone)).padStart(2, "0")}`);
    }
  });
});
