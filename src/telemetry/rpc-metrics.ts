import type { Registry } from "prom-client";

interface Series {
  labels: Record<string, string>;
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative): index i counts values ≤ bounds[i] and > bounds[i-1]. */
  perBucket: number[];
}

const REQUESTS = "platform_rpc_requests_total";
const DURATION = "platform_rpc_duration_seconds";

/**
 * The per-call counter and latency histogram. prom-client validates and hashes the labels
 * on every increment (children from labels() too); here a call costs one string key and a
 * few additions, and the series become prom-client metric objects only when scraped, in
 * the shapes its registry (and the cluster aggregator, which sums them) expects.
 */
export class RpcMetrics {
  private readonly series = new Map<string, Series>();

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
  ) {
    const aggregator = "sum" as const;
    registry.registerMetric({
      name: REQUESTS,
      help: "RPCs answered, by service, method, protocol (grpc, grpc-web, connect, rest) and code",
      type: "counter",
      get: async () => ({
        name: REQUESTS,
        help: "RPCs answered, by service, method, protocol (grpc, grpc-web, connect, rest) and code",
        type: "counter",
        aggregator,
        values: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.count })),
      }),
    } as never);
    const help = "Time from an RPC's arrival to its answer (a stream's: to its end), by service, method, protocol and code";
    registry.registerMetric({
      name: DURATION,
      help,
      type: "histogram",
      get: async () => ({ name: DURATION, help, type: "histogram", aggregator, values: [...this.series.values()].flatMap((s) => this.histogramValues(s)) }),
    } as never);
  }

  record(labels: { service: string; method: string; protocol: string; code: string }, seconds: number): void {
    const key = `${labels.service}/${labels.method} ${labels.protocol} ${labels.code}`;
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { ...labels }, count: 0, sum: 0, perBucket: this.bounds.map(() => 0) };
      this.series.set(key, series);
    }
    series.count++;
    series.sum += seconds;
    const bucket = this.bounds.findIndex((bound) => seconds <= bound);
    if (bucket >= 0) series.perBucket[bucket]!++;
  }

  private histogramValues(s: Series) {
    let cumulative = 0;
    const buckets = this.bounds.map((bound, i) => {
      cumulative += s.perBucket[i]!;
      return { labels: { ...s.labels, le: bound }, value: cumulative, metricName: `${DURATION}_bucket` };
    });
    return [
      ...buckets,
      { labels: { ...s.labels, le: "+Inf" }, value: s.count, metricName: `${DURATION}_bucket` },
      { labels: s.labels, value: s.sum, metricName: `${DURATION}_sum` },
      { labels: s.labels, value: s.count, metricName: `${DURATION}_count` },
    ];
  }
}
