import { setTimeout as sleep } from "node:timers/promises";
import type { DeliverySettings } from "../config/config.js";
import type { SecretBox } from "../crypto/encryption.js";
import type { FeatureFlags } from "../domain/feature/flags.js";
import type { OutboundClient } from "../http/outbound.js";
import type { Logger } from "../log/logger.js";
import type { Store } from "../store/database.js";
import { newId } from "../store/ids.js";
import { eventBody, resourceOwnerOf } from "./event-body.js";
import { CLAIM_LEASE_S, claimDue, complete, extendLease, LEASE_MARGIN_S, nextAttempt, type Claimed, type Result } from "./delivery-queue.js";
import type { DeliveryMetrics } from "./delivery-metrics.js";
import { callableTarget } from "./plans.js";
import { callTarget } from "./target-call.js";

export interface DeliveryWorkerDeps {
  store: Pick<Store, "db" | "forRequest">;
  flags: FeatureFlags;
  outbound: OutboundClient;
  box: SecretBox;
  /** As for request executions: the previous key signs beside the new one this long. */
  signingKeyGraceMs: number;
  settings: DeliverySettings;
  logger: Logger;
  metrics?: DeliveryMetrics;
}

/**
 * Delivers the outbox of event executions (outbox.ts), in every process: claims due rows
 * (delivery-queue.ts), calls their targets, writes each result. Claims are leases, so a
 * worker that dies loses nothing: its rows come back when their leases run out, and are
 * sent again (at least once). `stop` ends the loop and waits for the calls in flight.
 */
export function startDeliveryWorker(deps: DeliveryWorkerDeps): { stop(): Promise<void> } {
  const stopping = new AbortController();
  const log = deps.logger.child({ worker: "action-deliveries" });
  // Claims end with the worker (a stalled database must not hold up a shutdown); the calls
  // in flight and their results do not, so that a shutdown sends nothing twice.
  const claiming = deps.store.forRequest(stopping.signal).db;

  // A pool, not batches: one slow target must not hold back the calls to the others.
  const inFlight = new Set<Promise<void>>();
  const loop = async () => {
    while (!stopping.signal.aborted) {
      const free = deps.settings.concurrency - inFlight.size;
      let claimed: Claimed[] = [];
      if (free > 0) {
        const claimId = newId();
        try {
          claimed = await claimDue(claiming, claimId, free);
        } catch (error) {
          if (!stopping.signal.aborted) log.warn({ err: error }, "claiming event deliveries failed; trying again after the poll interval");
        }
        for (const row of claimed) {
          const call: Promise<void> = deliver(deps, log, row, claimId)
            .catch((error: unknown) => log.warn({ err: error, delivery: row.id }, "writing a delivery's result failed; its lease brings it back"))
            .finally(() => inFlight.delete(call));
          inFlight.add(call);
        }
        // All free slots filled: more may be due.
        if (claimed.length === free) continue;
      }
      // Until the poll interval passes or a call ends (a slot frees, or the next event of
      // that aggregate becomes due), whichever comes first.
      const pause = new AbortController();
      await Promise.race([
        sleep(deps.settings.pollIntervalMs, undefined, { signal: AbortSignal.any([stopping.signal, pause.signal]) }).catch(() => {}),
        ...(inFlight.size > 0 ? [Promise.race(inFlight)] : []),
      ]);
      pause.abort();
    }
    await Promise.all(inFlight);
  };
  const running = loop();
  return {
    async stop() {
      stopping.abort();
      await running;
    },
  };
}

async function deliver(deps: DeliveryWorkerDeps, log: Logger, row: Claimed, claimId: string): Promise<void> {
  const result = await attempt(deps, row, claimId).catch((error: unknown): Result => ({ kind: "retry", at: new Date(Date.now()), error: `internal: ${error instanceof Error ? error.message : String(error)}` }));
  if (!result) return;
  const final: Result = result.kind === "retry" ? scheduled(deps, row, result) : result;
  const written = await complete(deps.store.db, row, claimId, final);
  if (!written) {
    log.warn({ delivery: row.id, instance: row.instance_id }, "a delivery's lease ran out before its result was written; another worker owns it now");
    return;
  }
  if (final.kind !== "delivered") log.warn({ delivery: row.id, instance: row.instance_id, target: row.target_id, attempts: row.attempts, error: final.error, final: final.kind === "failed" }, "event delivery failed");
  deps.metrics?.record(final.kind);
}

/** A failed attempt is retried later, unless the next try would fall past the maximum age. */
function scheduled(deps: DeliveryWorkerDeps, row: Claimed, failed: Extract<Result, { kind: "retry" }>): Result {
  const at = nextAttempt(row, deps.settings.maxAgeMs);
  return at ? { ...failed, at } : { kind: "failed", error: `${failed.error} (gave up after ${row.attempts} attempts)`, ...(failed.status !== undefined && { status: failed.status }) };
}

async function attempt(deps: DeliveryWorkerDeps, row: Claimed, claimId: string): Promise<Result | undefined> {
  if (!(await deps.flags.forInstance(row.instance_id)).actions) return { kind: "failed", error: "the instance's actions feature is off" };
  // Both at once, and the aggregate's first payload (its owner) with the event.
  const [target, event] = await Promise.all([
    deps.store.db.selectFrom("targets").selectAll().where("instance_id", "=", row.instance_id).where("id", "=", row.target_id).executeTakeFirst(),
    deps.store.db
      .selectFrom("events as e")
      .selectAll("e")
      .select((eb) =>
        eb
          .selectFrom("events as f")
          .select("f.payload")
          .whereRef("f.instance_id", "=", "e.instance_id")
          .whereRef("f.aggregate_type", "=", "e.aggregate_type")
          .whereRef("f.aggregate_id", "=", "e.aggregate_id")
          .where("f.sequence", "=", 1)
          .as("first_payload"),
      )
      .where("e.position", "=", row.event_position)
      .where("e.instance_id", "=", row.instance_id)
      .executeTakeFirst(),
  ]);
  if (!target) return { kind: "failed", error: "the target no longer exists" };
  if (!event) return { kind: "failed", error: "the event no longer exists" };
  const needed = Math.ceil(target.timeout_ms / 1000) + LEASE_MARGIN_S;
  // Lost meanwhile (a stalled database outlasted the lease): the new holder sends it.
  if (needed > CLAIM_LEASE_S && !(await extendLease(deps.store.db, row, claimId, needed))) return undefined;
  const body = eventBody(event, resourceOwnerOf(row.aggregate_type, row.aggregate_id, row.instance_id, event.first_payload));
  const outcome = await callTarget(deps.outbound, callableTarget(target, deps.box, deps.signingKeyGraceMs), body);
  // The answer's body is ignored: any 2xx is a delivery, a forwarded error included.
  if (outcome.ok) return { kind: "delivered", status: outcome.status };
  if (outcome.status !== undefined && outcome.status >= 200 && outcome.status <= 299) return { kind: "delivered", status: outcome.status };
  return { kind: "retry", at: new Date(), error: outcome.reason, ...(outcome.status !== undefined && { status: outcome.status }) };
}
