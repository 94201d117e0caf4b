import type { Interceptor } from "@connectrpc/connect";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { ConnectionStats } from "../server/connection-limits.js";
import type { Store } from "../store/database.js";
import { readEventStoreStats, type EventStoreStats } from "../store/event-store-stats.js";
import { readWithin } from "../store/read-within.js";
import { codeName, outcomeOf, protocolOf, watchStream } from "./call.js";
import { RpcMetrics } from "./rpc-metrics.js";

/** From a cache hit (a millisecond) to a deadline (seconds). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The Prometheus metrics of one process, in a registry of its own (not prom-client's
 * global one), so that several services in one process (tests) never share counters.
 * Sources that exist only later in start-up (the store, the listener) are attached then.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private store: Store | undefined;
  private connections: (() => ConnectionStats) | undefined;
  private watchStreams: (() => number) | undefined;
  private reading: Promise<EventStoreStats> | undefined;

  private readonly rpcs = new RpcMetrics(this.registry, LATENCY_BUCKETS);

  /** `dbReadTimeoutMs` bounds the scrape's database read: a stuck database must not hang a scrape. */
  constructor(private readonly dbReadTimeoutMs: number) {
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    // prom-client calls collect() with the gauge as `this`; these reach this object's current state.
    const own = {
      store: () => this.store,
      connections: () => this.connections,
      watchStreams: () => this.watchStreams,
      readEventStore: () => this.readEventStore(),
    };
    new Gauge({
      name: "platform_db_pool_connections",
      help: "Database connections of this process, by state (in_use, idle); PGlite is one connection",
      labelNames: ["state"],
      registers,
      collect() {
        const stats = own.store()?.poolStats();
        if (!stats) return;
        this.set({ state: "in_use" }, stats.inUse);
        this.set({ state: "idle" }, stats.idle);
      },
    });
    new Gauge({
      name: "platform_db_pool_waiting",
      help: "Requests waiting for a database connection",
      registers,
      collect() {
        const stats = own.store()?.poolStats();
        if (stats) this.set(stats.waiting);
      },
    });
    const listenerGauge = (name: string, help: string, pick: (s: ConnectionStats) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const stats = own.connections()?.();
          if (stats) this.set(pick(stats));
        },
      });
    listenerGauge("platform_open_connections", "Open client connections on the service port", (s) => s.connections);
    listenerGauge("platform_http2_sessions", "Open HTTP/2 sessions on the service port", (s) => s.http2Sessions);
    listenerGauge("platform_http2_streams", "Open HTTP/2 streams (calls in flight over HTTP/2)", (s) => s.http2Streams);
    new Gauge({
      name: "platform_health_watch_streams",
      help: "Open grpc.health.v1.Health/Watch streams (capped by PLATFORM_MAX_WATCH_STREAMS)",
      registers,
      collect() {
        const open = own.watchStreams()?.();
        if (open !== undefined) this.set(open);
      },
    });

    // With several workers each reports the same database: the primary keeps the largest
    // (or, for "up", the smallest) instead of the sum. A reading that failed is absent
    // (remove), not 0 and not the last value: neither would be true.
    new Gauge({
      name: "platform_eventstore_position",
      help: "Position of the newest committed event in the event store",
      registers,
      aggregator: "max",
      async collect() {
        const reading = await own.readEventStore();
        if (reading) this.set(reading.position);
        else this.remove();
      },
    });
    new Gauge({
      name: "platform_projection_lag_seconds",
      help:
        "Projections are written in the transaction that appends their events, so they lag by the time that " +
        "transaction stays open: age of the oldest open writing transaction, 0 when there is none",
      registers,
      aggregator: "max",
      async collect() {
        const reading = await own.readEventStore();
        if (reading) this.set(reading.oldestWriteSeconds);
        else this.remove();
      },
    });
    new Gauge({
      name: "platform_eventstore_up",
      help: "1 when the event store answered this scrape's read in time, else 0 (and its gauges are absent)",
      registers,
      aggregator: "min",
      async collect() {
        this.set((await own.readEventStore()) ? 1 : 0);
      },
    });
  }

  watch(sources: { store?: Store; connections?: () => ConnectionStats; watchStreams?: () => number }): void {
    this.watchStreams = sources.watchStreams ?? this.watchStreams;
    this.store = sources.store ?? this.store;
    this.connections = sources.connections ?? this.connections;
  }

  /** Counts every call and its latency; outermost, so it sees the code the client gets. */
  interceptor(): Interceptor {
    return (next) => async (req) => {
      const started = performance.now();
      const labels = { service: req.service.typeName, method: req.method.name, protocol: protocolOf(req) };
      const record = (thrown?: unknown) => this.rpcs.record({ ...labels, code: codeName(outcomeOf(req.signal, thrown)) }, (performance.now() - started) / 1000);
      let res;
      try {
        res = await next(req);
      } catch (error) {
        record(error);
        throw error;
      }
      if (!res.stream) {
        record();
        return res;
      }
      return { ...res, message: watchStream(res.message, record) };
    };
  }

  /**
   * One read per scrape, shared by the gauges that need it, and never more than one in
   * flight: scrapes during a database stall answer without it instead of queueing more.
   */
  private async readEventStore(): Promise<EventStoreStats | undefined> {
    const store = this.store;
    if (!store) return undefined;
    // The signal ends the wait for a connection and cancels the statements (src/store/scoped.ts).
    this.reading ??= readEventStoreStats(store.forRequest(AbortSignal.timeout(this.dbReadTimeoutMs)).db).finally(() => (this.reading = undefined));
    const reading = this.reading;
    return readWithin(this.dbReadTimeoutMs, () => reading);
  }
}
