import type { Registry } from "prom-client";
import { OutboxMetrics } from "../../queue/outbox-metrics.js";
import type { Db } from "../../../store/db.js";
import { messages } from "./queue.js";

export type SendResult = "sent" | "retry" | "failed" | "waiting";

/**
 * Messages in Prometheus, by channel: this process's attempts (sent; retry: failed, tried
 * again later; failed: gave up; waiting: no provider active yet) and the backlog.
 */
export class NotificationMetrics extends OutboxMetrics<SendResult> {
  constructor(registry: Registry, db: Db, readTimeoutMs: number) {
    super(registry, {
      name: "platform_notifications",
      resultsHelp:
        "Attempts to send messages by this process, by channel and result: sent, retry (failed, tried again later), failed (gave up), waiting (no provider active)",
      pendingHelp: "Messages waiting to be sent, in every instance, by channel",
      results: ["sent", "retry", "failed", "waiting"],
      by: { label: "channel", values: ["email", "sms"] },
      pending: () => messages.pendingBy(db, "channel"),
      readTimeoutMs,
    });
  }
}
