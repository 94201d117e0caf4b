import { sql } from "kysely";
import { outboxTable } from "../../queue/outbox-table.js";
import type { Db } from "../../../store/db.js";

/** The outbox of messages (domain/notification/record.ts writes it). */
export const messages = outboxTable({
  table: "notifications",
  claimed: ["instance_id", "id", "org_id", "user_id", "kind", "channel", "recipient", "attempts", "sealed_data", "created_at", "expires_at"],
  done: { status: "sent", at: "sent_at" },
});

export type ClaimedNotification = Awaited<ReturnType<typeof messages.claim>>[number];

export type NotificationResult =
  | { kind: "sent"; language: string }
  /** Tried again at `at`; `counts` false when no attempt was made (no provider yet). */
  | { kind: "retry"; at: Date; error: string; counts: boolean; language?: string }
  | { kind: "failed"; error: string; language?: string };

/**
 * Writes a send's result while the claim is still this worker's. A sent message loses its
 * sealed content at once; a failed one keeps it until it expires (sweep.ts), so that
 * RetryNotification can send it again while its code is still good.
 */
export function completeNotification(db: Db, row: ClaimedNotification, claimId: string, result: NotificationResult): Promise<boolean> {
  const language = result.language !== undefined ? { language: result.language } : {};
  if (result.kind === "sent") return messages.finish(db, row, claimId, { kind: "done" }, { ...language, sealed_data: null });
  return messages.finish(db, row, claimId, result, { ...language, ...(result.kind === "retry" && !result.counts && { attempts: sql<number>`attempts - 1` }) });
}
