import type { QueueSettings } from "../../config/queues.js";
import type { SecretBox } from "../../crypto/encryption.js";
import type { FeatureFlags } from "../../domain/feature/flags.js";
import type { OutboundClient } from "../../http/outbound.js";
import type { Logger } from "../../log/logger.js";
import type { Store } from "../../store/database.js";
import { startClaimLoop } from "../queue/claim-loop.js";
import { retryOrGiveUp } from "../queue/retry-schedule.js";
import { eventBody, resourceOwnerOf } from "./event-body.js";
import { CLAIM_LEASE_S, claimDue, complete, deliveries, LEASE_MARGIN_S, type Claimed, type Result } from "./delivery-queue.js";
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
  settings: QueueSettings;
  logger: Logger;
  metrics?: DeliveryMetrics;
}

/**
 * Delivers the outbox of event executions (outbox.ts), in every process, on the shared
 * leased-queue loop (queue/claim-loop.ts): claims due rows (delivery-queue.ts), calls their
 * targets, writes each result. A worker that dies loses nothing: its rows come back when
 * their leases run out, and are sent again (at least once).
 */
export function startDeliveryWorker(deps: DeliveryWorkerDeps): { stop(): Promise<void> } {
  const log = deps.logger.child({ worker: "action-deliveries" });
  return startClaimLoop<Claimed>({
    concurrency: deps.settings.concurrency,
    pollIntervalMs: deps.settings.pollIntervalMs,
    logger: log,
    what: "event deliveries",
    // Claims end with the worker (a stalled database must not hold up a shutdown); the calls
    // in flight and their results do not, so that a shutdown sends nothing twice.
    claim: (claimId, limit, signal) => claimDue(deps.store.forRequest(signal).db, claimId, limit),
    handle: (row, claimId) => deliver(deps, log, row, claimId),
    idOf: (row) => row.id,
  });
}

async function deliver(deps: DeliveryWorkerDeps, log: Logger, row: Claimed, claimId: string): Promise<void> {
  const result = await attempt(deps, row, claimId).catch((error: unknown): Result => ({
    kind: "retry",
    at: new Date(Date.now()),
    error: `internal: ${error instanceof Error ? error.message : String(error)}`,
  }));
  if (!result) return;
  const final: Result = result.kind === "retry" ? retryOrGiveUp(result, row.attempts, row.window_start, deps.settings.maxAgeMs) : result;
  const written = await complete(deps.store.db, row, claimId, final);
  if (!written) {
    log.warn({ delivery: row.id, instance: row.instance_id }, "a delivery's lease ran out before its result was written; another worker owns it now");
    return;
  }
  if (final.kind !== "delivered")
    log.warn(
      { delivery: row.id, instance: row.instance_id, target: row.target_id, attempts: row.attempts, error: final.error, final: final.kind === "failed" },
      "event delivery failed",
    );
  deps.metrics?.record(final.kind);
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
  if (needed > CLAIM_LEASE_S && !(await deliveries.extendLease(deps.store.db, row, claimId, needed))) return undefined;
  const body = eventBody(event, resourceOwnerOf(row.aggregate_type, row.aggregate_id, row.instance_id, event.first_payload));
  const outcome = await callTarget(deps.outbound, callableTarget(target, deps.box, deps.signingKeyGraceMs), body);
  // The answer's body is ignored: any 2xx is a delivery, a forwarded error included.
  if (outcome.ok) return { kind: "delivered", status: outcome.status };
  if (outcome.status !== undefined && outcome.status >= 200 && outcome.status <= 299) return { kind: "delivered", status: outcome.status };
  return { kind: "retry", at: new Date(), error: outcome.reason, ...(outcome.status !== undefined && { status: outcome.status }) };
}
