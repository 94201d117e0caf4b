import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { RpcMetrics } from "../../src/telemetry/rpc-metrics.js";

describe("RpcMetrics", () => {
  const labels = { service: "s.S", method: "M", protocol: "grpc", code: "ok" };

  it("exposes a counter and a cumulative histogram in Prometheus' text format", async () => {
    const registry = new Registry();
    const metrics = new RpcMetrics(registry, [0.001, 0.005, 10]);
    for (const seconds of [0.0005, 0.003, 0.003, 20]) metrics.record(labels, seconds);
    metrics.record({ ...labels, code: "not_found" }, 0.002);
    const text = await registry.metrics();
    const line = (name: string, extra = "") =>
      text
        .split("\n")
        .find((l) => l.startsWith(`${name}{service="s.S",method="M",protocol="grpc",code="ok"${extra}}`))
        ?.split(" ")[1];
    expect(line("platform_rpc_requests_total")).toBe("4");
    expect(line("platform_rpc_duration_seconds_bucket", ',le="0.001"')).toBe("1");
    expect(line("platform_rpc_duration_seconds_bucket", ',le="0.005"')).toBe("3");
    expect(line("platform_rpc_duration_seconds_bucket", ',le="10"')).toBe("3");
    expect(line("platform_rpc_duration_seconds_bucket", ',le="+Inf"')).toBe("4");
    expect(Number(line("platform_rpc_duration_seconds_sum"))).toBeCloseTo(20.0065);
    expect(line("platform_rpc_duration_seconds_count")).toBe("4");
    expect(text).toContain('platform_rpc_requests_total{service="s.S",method="M",protocol="grpc",code="not_found"} 1');
  });

  it("gives the cluster aggregator JSON it can sum", async () => {
    const registry = new Registry();
    new RpcMetrics(registry, [1]).record(labels, 0.5);
    const json = await registry.getMetricsAsJSON();
    expect(json.map((m) => [m.name, m.type, m.aggregator])).toEqual([
      ["platform_rpc_requests_total", "counter", "sum"],
      ["platform_rpc_duration_seconds", "histogram", "sum"],
    ]);
  });
});
