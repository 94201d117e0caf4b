import type { AccessEpoch } from "../../cache/access-epoch.js";
import { AccessCache } from "../../cache/access-cache.js";
import type { SecretBox } from "../../crypto/encryption.js";
import { MAX_INCLUDE_DEPTH } from "../../domain/action/execution/model.js";
import type { Db } from "../../store/db.js";
import type { TargetRow } from "../../store/schema.js";
import type { CallableTarget } from "./target-call.js";

/**
 * Which targets a condition calls, in order: the most specific execution that exists among
 * the candidates (method, else service, else all), its targets, then its includes' targets
 * depth first; a target reached twice is called once, at its first place. Plans are cached
 * per process until the next change of access: writes of targets and executions advance
 * it (rpc/services/actions), so a change applies at once here and, by NOTIFY, elsewhere.
 */
export class ExecutionPlans {
  readonly #cache: AccessCache<string, CallableTarget[]>;

  constructor(
    access: AccessEpoch,
    private readonly box: SecretBox,
    /** How long a regenerated key's predecessor keeps signing beside it. */
    private readonly graceMs: number,
    ttlMs = 60_000,
  ) {
    this.#cache = new AccessCache(access, ttlMs);
  }

  /** Candidates from the most specific to the least, e.g. method, service, all. */
  async targets(db: Db, instanceId: string, candidates: readonly string[]): Promise<CallableTarget[]> {
    const plan = await this.#cache.get(`${instanceId} ${candidates.join(" ")}`, () => this.#load(db, instanceId, candidates));
    return plan!;
  }

  async #load(db: Db, instanceId: string, candidates: readonly string[]): Promise<CallableTarget[]> {
    const found = await db
      .selectFrom("executions")
      .select(["id", "targets", "includes"])
      .where("instance_id", "=", instanceId)
      .where("id", "in", [...candidates])
      .execute();
    const chosen = candidates.map((id) => found.find((row) => row.id === id)).find((row) => row !== undefined);
    if (!chosen) return [];
    const executions = new Map([[chosen.id, chosen]]);
    let level = [chosen.id];
    // Includes nest at most MAX_INCLUDE_DEPTH levels (checked when they are written).
    for (let depth = 0; depth <= MAX_INCLUDE_DEPTH && level.length > 0; depth++) {
      const missing = level.flatMap((id) => executions.get(id)?.includes ?? []).filter((id) => !executions.has(id));
      if (missing.length === 0) break;
      const rows = await db
        .selectFrom("executions")
        .select(["id", "targets", "includes"])
        .where("instance_id", "=", instanceId)
        .where("id", "in", missing)
        .execute();
      for (const row of rows) executions.set(row.id, row);
      level = rows.map((row) => row.id);
    }
    const order = targetOrder(chosen.id, executions);
    if (order.length === 0) return [];
    const rows = await db.selectFrom("targets").selectAll().where("instance_id", "=", instanceId).where("id", "in", order).execute();
    const now = Date.now();
    return order.flatMap((id) => {
      const row = rows.find((r) => r.id === id);
      return row ? [callableTarget(row, this.box, this.graceMs, now)] : [];
    });
  }
}

/**
 * The targets an execution calls, in order: its own, then its includes' depth first; a
 * target reached twice is called once, at its first place. Event executions (outbox.ts)
 * use it too, with all of an instance's event executions at hand.
 */
export function targetOrder(chosen: string, executions: ReadonlyMap<string, { targets: readonly string[]; includes: readonly string[] }>): string[] {
  const order: string[] = [];
  const visit = (id: string, seen: Set<string>) => {
    const execution = executions.get(id);
    if (!execution || seen.has(id)) return;
    seen.add(id);
    for (const target of execution.targets) if (!order.includes(target)) order.push(target);
    for (const include of execution.includes) visit(include, seen);
  };
  visit(chosen, new Set());
  return order;
}

/** A stored target ready to call: its key, and the previous one while its grace period lasts. */
export function callableTarget(row: TargetRow, box: SecretBox, graceMs: number, now = Date.now()): CallableTarget {
  const keys = [box.decrypt(row.signing_key)];
  if (row.previous_signing_key && row.signing_key_changed_at && now - new Date(row.signing_key_changed_at).getTime() < graceMs) {
    keys.push(box.decrypt(row.previous_signing_key));
  }
  return { id: row.id, name: row.name, kind: row.target_type, url: row.url, timeoutMs: row.timeout_ms, mode: row.execution_mode, keys };
}
