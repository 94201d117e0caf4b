import { setTimeout as sleep } from "node:timers/promises";
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../../gen/grpc/health/v1/health_pb.js";

/** The spec only promises that Watch reports changes, not how fast; this bounds the probe load. */
const WATCH_INTERVAL_MS = 2_000;

/** Open Watch streams of one process and their cap; metrics read `open`. */
export interface WatchStreams {
  readonly max: number;
  open: number;
}

export function watchStreams(max: number): WatchStreams {
  return { max, open: 0 };
}

/**
 * gRPC health checking (grpc.health.v1). Every service shares the server's status:
 * they all stand or fall with the same resources, which `isServing` probes.
 */
export function healthService(
  services: readonly DescService[],
  isServing: () => Promise<boolean>,
  /** Aborted when the server shuts down: it then reports NOT_SERVING and ends watches. */
  shutdown: AbortSignal,
  /** Watch is public and lives for hours: without a cap anyone could hold memory indefinitely. */
  watches: WatchStreams,
): ServiceImpl<typeof Health> {
  // "" asks about the server as a whole.
  const known = new Set(["", Health.typeName, ...services.map((s) => s.typeName)]);
  // A probe that fails means we cannot serve; it must not turn into a broken health check.
  const current = async () => (!shutdown.aborted && (await isServing().catch(() => false)) ? Status.SERVING : Status.NOT_SERVING);

  return {
    async check({ service }) {
      if (!known.has(service)) throw new ConnectError(`unknown service ${service}`, Code.NotFound);
      return { status: await current() };
    },
    async list() {
      const status = await current();
      return { statuses: Object.fromEntries([...known].map((name) => [name, { status }])) };
    },
    async *watch({ service }, context) {
      if (watches.open >= watches.max) {
        throw new ConnectError(`${watches.max} health watches are open, the most allowed; use Check or try later`, Code.ResourceExhausted);
      }
      watches.open++;
      try {
        // Open watches would otherwise hold a draining server until its grace period ends.
        const signal = AbortSignal.any([context.signal, shutdown]);
        let last: Status | undefined;
        while (!signal.aborted) {
          // The set of services is fixed, but the spec wants an unknown one watched, not refused.
          const status = known.has(service) ? await current() : Status.SERVICE_UNKNOWN;
          if (status !== last) yield { status };
          last = status;
          // Rejects when the client goes away, which ends the stream normally.
          await sleep(WATCH_INTERVAL_MS, undefined, { signal }).catch(() => {});
        }
        if (shutdown.aborted && !context.signal.aborted && last !== Status.NOT_SERVING) yield { status: Status.NOT_SERVING };
      } finally {
        watches.open--;
      }
    },
  };
}
