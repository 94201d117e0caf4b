import { Counter, Gauge, type Registry } from "prom-client";
import type { Db } from "../../store/db.js";
import type { Channel } from "../../domain/notification/kinds.js";
import { readWithin } from "../../telemetry/read-within.js";
import { pendingNotifications } from "./queue.js";

export type SendResult = "sent" | "retry" | "failed" | "waiting";

/**
 * Messages in Prometheus: this process's attempts by channel and result (sent; retry: failed,
 * tried again later; failed: gave up; waiting: no provider active yet) and the backlog of
 * every process per channel, read at each scrape within `readTimeoutMs`.
 */
export class NotificationMetrics {
  readonly #results: Counter<"channel" | "result">;

  constructor(registry: Registry, db: Db, readTimeoutMs: number) {
    this.#results = new Counter({
      name: "platform_notifications_total",
      help: "Attempts to send messages by this process, by channel and result: sent, retry (failed, tried again later), failed (gave up), waiting (no provider active)",
      labelNames: ["channel", "result"],
      registers: [registry],
    });
    for (const channel of ["email", "sms"]) for (const result of ["sent", "retry", "failed", "waiting"]) this.#results.inc({ channel, result }, 0);
    new Gauge({
      name: "platform_notifications_pending",
      help: "Messages waiting to be sent, in every instance, by channel",
      labelNames: ["channel"],
      registers: [registry],
      // Every process reads the same database: the largest reading, not the sum.
      aggregator: "max",
      async collect() {
        const rows = await readWithin(readTimeoutMs, () => pendingNotifications(db));
        this.reset();
        if (rows === undefined) return;
        for (const channel of ["email", "sms"]) this.set({ channel }, rows.find((r) => r.channel === channel)?.n ?? 0);
      },
    });
  }

  record(channel: Channel, result: SendResult): void {
    this.#results.inc({ channel, result });
  }
}
