import { Counter, Gauge, type Registry } from "prom-client";
import type { Db } from "../store/db.js";
import { readWithin } from "../telemetry/read-within.js";
import { pendingCount } from "./delivery-queue.js";

/**
 * Event deliveries in Prometheus: results of this process's attempts (delivered, retry,
 * failed for good) and the backlog of every process, read from the database at each
 * scrape, bounded by `readTimeoutMs` so that a stalled database cannot hang the scrape.
 */
export class DeliveryMetrics {
  readonly #results: Counter<"result">;

  constructor(registry: Registry, db: Db, readTimeoutMs: number) {
    this.#results = new Counter({
      name: "platform_action_deliveries_total",
      help: "Attempts of event deliveries by this process, by result: delivered, retry (failed, tried again later), failed (gave up)",
      labelNames: ["result"],
      registers: [registry],
    });
    for (const result of ["delivered", "retry", "failed"]) this.#results.inc({ result }, 0);
    new Gauge({
      name: "platform_action_deliveries_pending",
      help: "Event deliveries waiting for a successful call, in every instance",
      registers: [registry],
      // Every process reads the same database: the largest reading, not the sum.
      aggregator: "max",
      async collect() {
        const n = await readWithin(readTimeoutMs, () => pendingCount(db));
        if (n === undefined) this.remove();
        else this.set(n);
      },
    });
  }

  record(result: "delivered" | "retry" | "failed"): void {
    this.#results.inc({ result });
  }
}
