import type { Registry } from "prom-client";
import type { Db } from "../../store/db.js";
import { OutboxMetrics } from "../queue/outbox-metrics.js";
import { deliveries } from "./delivery-queue.js";

/** Event deliveries in Prometheus: delivered, retry (tried again later), failed (gave up); and the backlog. */
export class DeliveryMetrics extends OutboxMetrics<"delivered" | "retry" | "failed"> {
  constructor(registry: Registry, db: Db, readTimeoutMs: number) {
    super(registry, {
      name: "platform_action_deliveries",
      resultsHelp: "Attempts of event deliveries by this process, by result: delivered, retry (failed, tried again later), failed (gave up)",
      pendingHelp: "Event deliveries waiting for a successful call, in every instance",
      results: ["delivered", "retry", "failed"],
      pending: async () => new Map([["", await deliveries.pending(db)]]),
      readTimeoutMs,
    });
  }
}
