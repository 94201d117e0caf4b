import { Counter, Gauge, type LabelValues, type Registry } from "prom-client";
import { readWithin } from "../../store/read-within.js";

export interface OutboxMetricsOptions<Result extends string> {
  /** `<name>_total` counts this process's attempts by result; `<name>_pending` is the backlog. */
  name: string;
  resultsHelp: string;
  pendingHelp: string;
  results: readonly Result[];
  /** Both metrics split by this label (the notifications' channel), over these values. */
  by?: { label: string; values: readonly string[] };
  /** The backlog of every process per value of the label (the key "" when there is none). */
  pending(): Promise<Map<string, number>>;
  /** A stalled database must not hang the scrape: past this, the backlog is left out. */
  readTimeoutMs: number;
}

/**
 * An outbox in Prometheus: the results of this process's attempts, every one of them shown
 * from the start at zero, and the backlog of every process, read from the database at each
 * scrape.
 */
export class OutboxMetrics<Result extends string> {
  readonly #results: Counter<string>;
  readonly #label: string | undefined;

  constructor(registry: Registry, o: OutboxMetricsOptions<Result>) {
    const label = (this.#label = o.by?.label);
    const series: { key: string; labels: LabelValues<string> }[] = label
      ? o.by!.values.map((key) => ({ key, labels: { [label]: key } }))
      : [{ key: "", labels: {} }];
    this.#results = new Counter({ name: `${o.name}_total`, help: o.resultsHelp, labelNames: [...(label ? [label] : []), "result"], registers: [registry] });
    for (const { labels } of series) for (const result of o.results) this.#results.inc({ ...labels, result }, 0);
    new Gauge({
      name: `${o.name}_pending`,
      help: o.pendingHelp,
      labelNames: label ? [label] : [],
      registers: [registry],
      // Every process reads the same database: the largest reading, not the sum.
      aggregator: "max",
      async collect() {
        const counts = await readWithin(o.readTimeoutMs, () => o.pending());
        for (const { key, labels } of series) {
          if (counts === undefined) this.remove(labels);
          else this.set(labels, counts.get(key) ?? 0);
        }
      },
    });
  }

  /** One attempt's result; `labelValue` is the row's value of the label the metrics are split by. */
  record(result: Result, labelValue?: string): void {
    this.#results.inc({ ...(this.#label && { [this.#label]: labelValue }), result });
  }
}
