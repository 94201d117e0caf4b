import { expect } from "vitest";
import type { CallResult } from "./clients.js";

// Answers are read as loose JSON: each test names the fields it looks at.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any RPC's answer over five protocols, read field by field at ~300 sites; gen/ has no JSON types of the messages, and `unknown` fails 1007 of those reads
export type Msg = any;

/** The message of a successful call; fails the test with the whole answer otherwise. */
export function okMessage(r: CallResult): Msg {
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
  return (r as { message: Msg }).message;
}

/** ListDetails with proto3 JSON defaults filled in. */
export function listDetails(m: Msg) {
  const d = m.details ?? {};
  return {
    appliedLimit: d.appliedLimit ?? 0,
    endOfList: d.endOfList ?? false,
    totalResult: Number(d.totalResult ?? 0),
    processedSequence: BigInt(d.processedSequence ?? 0),
    timestamp: d.timestamp as string | undefined,
  };
}
