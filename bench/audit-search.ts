/**
 * The audit log's search (issue 40: "a search of the last 100 events of a resource with 2
 * million events in the table … within 20 ms on PostgreSQL"): SearchEvents over REST, one
 * call at a time as a person or a SIEM makes them, on a table of BENCH_AUDIT_EVENTS events
 * (2,000,000) seeded in bulk with SQL (not through the API) in 100 transactions, so that the
 * log's order by transaction has many transactions to go through, as a real one would. One
 * user has 20,000 of them (every hundredth), one organization a tenth, the rest is spread over
 * 100,000 resources of the instance. Against the baseline of GetTarget by id on the same
 * service and database; the planner's statistics are gathered after the seeding.
 *
 * Figures per search: p50, p95 and the slowest of BENCH_SEARCH_ROUNDS calls (100) after ten
 * of warm-up. The aim is p95 ≤ 20 ms for the resource's last 100.
 *
 * Knobs: BENCH_AUDIT_EVENTS, BENCH_SEARCH_ROUNDS, BENCH_DATABASE_URL.
 */
import pg from "pg";
import { performance } from "node:perf_hooks";
import { analyze } from "./database.js";
import { requestJson, type Created } from "./http-json.js";
import { latencyReport, runLatencyBench, timeCalls, type TimedCall } from "./latency.js";
import { callApi, type ServiceUnderTest } from "./service.js";
import { wholeNumber } from "./settings.js";

const EVENTS = wholeNumber("BENCH_AUDIT_EVENTS", 2_000_000, 10_000, 100_000_000);
const ROUNDS = wholeNumber("BENCH_SEARCH_ROUNDS", 100, 10, 100_000);
const BATCHES = 100;
const AIM_MS = 20;
const RESOURCE = "bench-resource";
const ORG = "bench-org";

/** The events, in BATCHES transactions: every hundredth of RESOURCE, every tenth in ORG. */
async function seed(databaseUrl: string, instanceId: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const sequence = `events_pos_${instanceId.replaceAll("-", "")}`;
    const per = Math.ceil(EVENTS / BATCHES);
    for (let b = 0; b < BATCHES; b++) {
      await client.query(
        `insert into events (instance_id, aggregate_type, aggregate_id, org_id, sequence, event_type, payload, creator, instance_position)
         select $1, 'user',
           case when g % 100 = 0 then $2 else 'agg-' || (g % 100000) end,
           case when g % 10 = 0 then $3 else '' end,
           case when g % 100 = 0 then g / 100 else 1000000 + g end,
           (array['user.changed', 'user.human.added', 'user.password.changed', 'user.grant.added'])[1 + g % 4],
           jsonb_build_object('name', 'Person ' || g, 'email', 'p' || g || '@example.com'),
           'bench', nextval($4::regclass)
         from generate_series($5::bigint, $6::bigint) g`,
        [instanceId, RESOURCE, ORG, sequence, b * per + 1, Math.min(EVENTS, (b + 1) * per)],
      );
    }
  } finally {
    await client.end();
  }
}

const measure = (service: ServiceUnderTest, name: string, call: (n: number) => TimedCall) => timeCalls(service, ROUNDS, name, call);

const search = (body: unknown) => ({ method: "POST", path: "/resources/v3alpha/events/_search", body });

runLatencyBench(async (s, databaseUrl) => {
  const target = (await callApi(
    s.port,
    s.headers,
    "POST",
    "/resources/v3alpha/targets",
    { name: "baseline", restWebhook: { url: "https://example.com/hook" }, timeout: "10s" },
    201,
  )) as Created;
  const instanceId = (
    (await requestJson(s.port, "POST", "/resources/v3alpha/events/_search", { headers: s.headers, body: { limit: 1 } })).body as {
      result: { instanceId: string }[];
    }
  ).result[0]!.instanceId;
  const seeding = performance.now();
  await seed(databaseUrl, instanceId);
  const seededS = (performance.now() - seeding) / 1000;
  await analyze(databaseUrl);
  const page2 = (
    (
      await requestJson(s.port, "POST", "/resources/v3alpha/events/_search", {
        headers: s.headers,
        body: { filters: [{ resource: { type: "user", id: RESOURCE } }], limit: 100 },
      })
    ).body as { continuation: string }
  ).continuation;
  const rows = [
    await measure(s, "GetTarget by id (baseline)", () => ({ method: "GET", path: `/resources/v3alpha/targets/${target.details.id}` })),
    await measure(s, `a resource's last 100 (of ${(EVENTS / 100).toLocaleString("en")})`, () =>
      search({ filters: [{ resource: { type: "user", id: RESOURCE } }], limit: 100 }),
    ),
    await measure(s, "a resource's next 100 (continuation)", () =>
      search({ filters: [{ resource: { type: "user", id: RESOURCE } }], limit: 100, continuation: page2 }),
    ),
    await measure(s, "the instance's last 100", () => search({ limit: 100 })),
    await measure(s, "an organization's last 100 (a tenth)", () => search({ filters: [{ organization: { orgId: ORG } }], limit: 100 })),
    await measure(s, "a group's last 100 (user.grant, a quarter)", () => search({ filters: [{ types: { groups: ["user.grant"] } }], limit: 100 })),
  ];
  const setup = `${EVENTS.toLocaleString("en")} events in the table (seeded in bulk in ${BATCHES} transactions, ${seededS.toFixed(0)} s), PostgreSQL, one call at a time over REST, ${ROUNDS} calls each after 10 of warm-up.`;
  // The aim is about a resource's history; the other rows say what the rest costs.
  return latencyReport("Audit log search", setup, rows, AIM_MS, 1, { header: "rows", cell: (_, i) => String(rows[i]!.rows) }, (i) => i === 1);
});
