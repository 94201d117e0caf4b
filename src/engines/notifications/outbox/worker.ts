import type { QueueSettings } from "../../../config/queues.js";
import type { SecretBox } from "../../../crypto/encryption.js";
import type { Logger } from "../../../log/logger.js";
import { startClaimLoop } from "../../queue/claim-loop.js";
import { retryOrGiveUp } from "../../queue/retry-schedule.js";
import type { Store } from "../../../store/database.js";
import { NoActiveProvider, SendFailed, type NotificationSender } from "../message.js";
import { type MessageKind } from "../../../domain/notification/kinds.js";
import type { InstanceLinks } from "./links.js";
import type { NotificationMetrics } from "./metrics.js";
import { completeNotification, messages, type ClaimedNotification, type NotificationResult } from "./queue.js";
import type { SealedContent } from "../../../domain/notification/record.js";
import { renderFor } from "./render.js";

/** The queue's settings (a message fails at its maximum age, and at the latest when its code expires), and: */
interface NotificationSettings extends Pick<QueueSettings, "maxAgeMs" | "pollIntervalMs" | "concurrency"> {
  /** How long a claim lasts: longer than any send may take (the providers' timeouts). */
  leaseS: number;
  /** A message that found no active provider looks again after this (sooner when one is activated). */
  noProviderWaitMs: number;
}

export interface NotificationWorkerDeps {
  store: Pick<Store, "db" | "forRequest">;
  box: SecretBox;
  sender: NotificationSender;
  links: InstanceLinks;
  settings: NotificationSettings;
  logger: Logger;
  metrics?: NotificationMetrics;
}

/**
 * Sends the outbox of messages (record.ts) in every process, on the leased-queue loop the
 * event deliveries use (queue/claim-loop.ts): renders each in its user's language with the
 * texts in force, hands it to the instance's active provider, writes the result. A worker
 * that dies loses nothing (leases); a message waits while no provider is active and goes
 * out once one is, within its maximum age.
 */
export function startNotificationWorker(deps: NotificationWorkerDeps): { stop(): Promise<void> } {
  const log = deps.logger.child({ worker: "notifications" });
  return startClaimLoop<ClaimedNotification>({
    concurrency: deps.settings.concurrency,
    pollIntervalMs: deps.settings.pollIntervalMs,
    logger: log,
    what: "notifications",
    claim: (claimId, limit, signal) => messages.claim(deps.store.forRequest(signal).db, claimId, limit, deps.settings.leaseS),
    handle: (row, claimId) => send(deps, log, row, claimId),
    idOf: (row) => row.id,
  });
}

async function send(deps: NotificationWorkerDeps, log: Logger, row: ClaimedNotification, claimId: string): Promise<void> {
  const result = await attempt(deps, row).catch((error: unknown): NotificationResult => ({
    kind: "retry",
    at: new Date(),
    error: `internal: ${error instanceof Error ? error.message : String(error)}`,
    counts: true,
  }));
  // A message is given up at its maximum age, and at the latest when its code expires.
  const final =
    result.kind === "retry" && result.counts
      ? retryOrGiveUp(result, row.attempts, new Date(row.created_at), deps.settings.maxAgeMs, new Date(row.expires_at))
      : result;
  if (!(await completeNotification(deps.store.db, row, claimId, final))) {
    log.warn({ notification: row.id, instance: row.instance_id }, "a message's lease ran out before its result was written; another worker owns it now");
    return;
  }
  // Never the content: it holds codes.
  if (final.kind !== "sent")
    log.warn(
      {
        notification: row.id,
        instance: row.instance_id,
        kind: row.kind,
        channel: row.channel,
        attempts: row.attempts,
        error: final.error,
        final: final.kind === "failed",
      },
      "message not sent",
    );
  deps.metrics?.record(final.kind === "retry" && !final.counts ? "waiting" : final.kind, row.channel);
}

async function attempt(deps: NotificationWorkerDeps, row: ClaimedNotification): Promise<NotificationResult> {
  const now = Date.now();
  if (now >= new Date(row.expires_at).getTime() || now >= new Date(row.created_at).getTime() + deps.settings.maxAgeMs)
    return { kind: "failed", error: "expired before it could be sent" };
  if (row.sealed_data === null) return { kind: "failed", error: "its content is gone" };
  const content = JSON.parse(deps.box.decrypt(row.sealed_data)) as SealedContent;
  const rendered = await renderFor(deps.store.db, deps.links, row, row.kind as MessageKind, content);
  if (!rendered) return { kind: "failed", error: "the user or its address is gone" };
  try {
    if (rendered.channel === "email") await deps.sender.sendEmail(row.instance_id, rendered.email);
    else await deps.sender.sendSms(row.instance_id, rendered.sms);
    return { kind: "sent", language: rendered.language };
  } catch (error) {
    if (error instanceof NoActiveProvider)
      return { kind: "retry", at: new Date(now + deps.settings.noProviderWaitMs), error: error.message, counts: false, language: rendered.language };
    if (error instanceof SendFailed)
      return error.retryable
        ? { kind: "retry", at: new Date(), error: error.message, counts: true, language: rendered.language }
        : { kind: "failed", error: error.message, language: rendered.language };
    throw error;
  }
}
