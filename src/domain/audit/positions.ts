import { createHash } from "node:crypto";
import { invalidArgument } from "../errors.js";

/**
 * Where an event is in the audit log: its transaction's id and its position in the instance.
 * The log is read in this order, up to the oldest transaction still running (queries.ts):
 * an event with a smaller key can no longer appear once a reader has passed it, which is
 * what lets a stream resume after a position without gaps. Written as `<tx>.<position>`.
 */
export interface LogPosition {
  tx: string;
  position: number;
}

export const LOG_START: LogPosition = { tx: "0", position: 0 };

const FORMAT = /^(\d{1,20})\.(\d{1,18})$/;

export function formatPosition(p: LogPosition): string {
  return `${p.tx}.${p.position}`;
}

/** Negative when `a` comes before `b` in the log. */
export function comparePositions(a: LogPosition, b: LogPosition): number {
  const tx = BigInt(a.tx) - BigInt(b.tx);
  return tx !== 0n ? (tx < 0n ? -1 : 1) : a.position - b.position;
}

export function parsePosition(text: string, field: string): LogPosition {
  const m = FORMAT.exec(text);
  if (!m) throw invalidArgument(`${field} must be an event's position, such as "1234.56" (got "${text.slice(0, 40)}")`);
  return { tx: BigInt(m[1]!).toString(), position: Number(m[2]) };
}

/**
 * A search's next page: the last key of the page before, and a digest of the search it
 * belongs to, so that a token given with other filters or order is refused rather than
 * silently paging something else. A resource's own history pages by its sequence; every
 * other search by log position.
 */
export type PageKey = { by: "position"; after: LogPosition } | { by: "sequence"; after: number };

export function encodeContinuation(key: PageKey, search: unknown): string {
  const k = key.by === "position" ? ["p", formatPosition(key.after)] : ["s", String(key.after)];
  return Buffer.from(JSON.stringify([...k, digest(search)])).toString("base64url");
}

export function decodeContinuation(token: string, search: unknown): PageKey {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    parts = undefined;
  }
  if (!Array.isArray(parts) || parts.length !== 3 || parts.some((p) => typeof p !== "string"))
    throw invalidArgument("continuation is not one this service gave");
  const [by, after, of] = parts as [string, string, string];
  if (of !== digest(search)) throw invalidArgument("continuation belongs to another search: give the filters and order it came with");
  if (by === "p") return { by: "position", after: parsePosition(after, "continuation") };
  if (by === "s" && /^\d{1,18}$/.test(after)) return { by: "sequence", after: Number(after) };
  throw invalidArgument("continuation is not one this service gave");
}

function digest(search: unknown): string {
  return createHash("sha256").update(JSON.stringify(search)).digest("base64url").slice(0, 16);
}
