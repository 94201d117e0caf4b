import { describe, expect, it } from "vitest";
import { SignInLog } from "../../src/domain/audit/sign-in-log.js";
import type { SignInAttempt } from "../../src/domain/audit/sign-ins.js";
import type { SignInRow } from "../../src/store/sign-in-log.js";

/*
 * The writer of sign-in events (src/domain/audit/sign-in-log.ts): attempts taken at once and
 * written together behind them; a failed write counted and logged, never thrown; at close
 * every open window summed up.
 */

const I = "01a20000-0000-7000-8000-000000000001";
const settings = { windowMs: 60_000, burst: 2, keys: 100, buffer: 100, flushIntervalMs: 60_000 };
const attempt = (outcome: "wrong_password" | "unknown_name", ip = "192.0.2.1"): SignInAttempt => ({
  instanceId: I,
  channel: "session",
  method: "password",
  outcome,
  ...(outcome === "wrong_password" && { user: { id: "ada", orgId: "org" } }),
  origin: { client: "pat:1", ip, userAgent: "test" },
});

function logOf(write: (rows: SignInRow[]) => Promise<void>, overrides: Partial<typeof settings> = {}) {
  const warnings: unknown[] = [];
  const log = new SignInLog({ settings: { ...settings, ...overrides }, write, logger: { warn: (obj: unknown) => void warnings.push(obj) } as never });
  return { log, warnings };
}

describe("SignInLog", () => {
  it("writes the waiting rows in one write, and at close the summaries of every open window", async () => {
    const writes: SignInRow[][] = [];
    const { log } = logOf(async (rows) => void writes.push(rows));
    for (let i = 0; i < 4; i++) log.record(attempt("wrong_password"));
    await log.flush();
    expect(writes.map((rows) => rows.map((r) => r.type))).toEqual([["signin.failed", "signin.failed"]]);
    expect(writes[0]![0]).toMatchObject({
      instanceId: I,
      aggregateId: "ada",
      orgId: "org",
      creator: "ada",
      client: "pat:1",
      ip: "192.0.2.1",
      userAgent: "test",
    });
    await log.close();
    expect(writes[1]).toEqual([
      expect.objectContaining({
        type: "signin.suppressed",
        aggregateId: "ada",
        payload: expect.objectContaining({ userId: "ada", count: 2, reasons: { wrong_password: 2 } }),
      }),
    ]);
  });

  it("counts what the buffer has no room for into the summaries", async () => {
    const writes: SignInRow[][] = [];
    const { log } = logOf(async (rows) => void writes.push(rows), { buffer: 1, burst: 10 });
    log.record(attempt("unknown_name", "192.0.2.1"));
    log.record(attempt("unknown_name", "192.0.2.2"));
    await log.close();
    expect(writes.flat().map((r) => [r.type, r.ip])).toEqual([
      ["signin.failed", "192.0.2.1"],
      ["signin.suppressed", "192.0.2.2"],
    ]);
  });

  it("counts and logs a failed write: its rows are lost, nothing is thrown", async () => {
    const { log, warnings } = logOf(async () => {
      throw new Error("database down");
    });
    log.record(attempt("unknown_name"));
    await log.flush();
    expect(log.lost).toBe(1);
    expect(warnings).toEqual([expect.objectContaining({ rows: 1, lost: 1 })]);
    await log.close();
  });
});
