/**
 * The console's user list (issue 36: "a search over 10,000 users answers its first page
 * within 300 ms on PostgreSQL"): SearchUsers over REST, one call at a time as a person paging
 * through the list makes them, on an instance holding BENCH_SEARCH_USERS people (10,000),
 * against the baseline of GetUser by id on the same service and database (the cheapest read
 * of one user: what a search costs beyond reading a row). The people are created through the
 * API with one imported Argon2id hash (hashing 10,000 passwords would only slow the
 * seeding) and verified addresses (no message is queued); the planner's statistics are
 * gathered after the seeding, as autovacuum would.
 *
 * Figures per search: p50, p95 and the slowest of BENCH_SEARCH_ROUNDS calls (100) after ten
 * of warm-up, and p50 as a multiple of the baseline's. The aim is p95 ≤ 300 ms.
 *
 * Knobs: BENCH_SEARCH_USERS, BENCH_SEARCH_ROUNDS, BENCH_DATABASE_URL.
 */
import { performance } from "node:perf_hooks";
import { createPasswordHasher } from "../src/crypto/passwords.js";
import { analyze } from "./database.js";
import { requestJson, type Created } from "./http-json.js";
import { latencyReport, runLatencyBench, timeCalls, type TimedCall } from "./latency.js";
import type { ServiceUnderTest } from "./service.js";
import { ARGON2, USER_PASSWORD, wholeNumber } from "./settings.js";

const USERS = wholeNumber("BENCH_SEARCH_USERS", 10_000, 100, 1_000_000);
const ROUNDS = wholeNumber("BENCH_SEARCH_ROUNDS", 100, 10, 100_000);
const IN_FLIGHT = 16;
const PAGE = 20;
const AIM_MS = 300;

const FAMILY = ["Hopper", "Lovelace", "Turing", "Hamilton", "Liskov", "Knuth", "Dijkstra", "Ritchie", "Thompson", "Allen"];

async function seed(service: ServiceUnderTest): Promise<string[]> {
  const hashedPassword = await createPasswordHasher(ARGON2).hash(USER_PASSWORD);
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < USERS; n = next++) {
      const username = `user-${String(n).padStart(6, "0")}`;
      const res = await requestJson(service.port, "POST", "/resources/v3alpha/users", {
        headers: service.headers,
        body: {
          username,
          human: {
            profile: { givenName: `Person ${n}`, familyName: FAMILY[n % FAMILY.length] },
            email: { address: `${username}@example.com`, isVerified: true },
            hashedPassword,
          },
        },
      });
      if (res.status !== 201) throw new Error(`seeding ${username}: ${res.status} ${JSON.stringify(res.body)}`);
      ids.push((res.body as Created).details.id);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return ids;
}

const measure = (service: ServiceUnderTest, name: string, call: (n: number) => TimedCall) => timeCalls(service, ROUNDS, name, call);

const search = (filters: unknown[], offset = 0) => ({
  method: "POST",
  path: `/resources/v3alpha/users/_search?query.offset=${offset}&query.limit=${PAGE}&query.asc=true&sortingColumn=USER_FIELD_NAME_USERNAME`,
  body: filters,
});
const contains = (field: "loginName" | "displayName" | "email", value: string) => ({ [field]: { value, method: "TEXT_FILTER_METHOD_CONTAINS_IGNORE_CASE" } });

runLatencyBench(async (s, databaseUrl) => {
  const seeding = performance.now();
  const ids = await seed(s);
  const seededS = (performance.now() - seeding) / 1000;
  await analyze(databaseUrl);
  const rows = [
    await measure(s, "GetUser by id (baseline)", (n) => ({ method: "GET", path: `/resources/v3alpha/users/${ids[(n + ids.length) % ids.length]}` })),
    await measure(s, "first page, no filter", () => search([])),
    await measure(s, "first page, login name contains", (n) =>
      search([
        contains(
          "loginName",
          String(4000 + ((n + 10) % 1000))
            .padStart(6, "0")
            .slice(2),
        ),
      ]),
    ),
    await measure(s, "first page, name contains (10% match)", (n) => search([contains("displayName", FAMILY[(n + 10) % FAMILY.length]!.toLowerCase())])),
    await measure(s, "first page, email contains (no match)", () => search([contains("email", "nobody-here")])),
    await measure(s, "last page, no filter", () => search([], USERS - PAGE)),
  ];
  const setup = `${USERS} people in one instance (seeded in ${seededS.toFixed(0)} s), PostgreSQL, one call at a time, ${ROUNDS} calls each after 10 of warm-up, ${PAGE} per page.`;
  return latencyReport("User search (the console's list)", setup, rows, AIM_MS, 1, { header: "rows", cell: (_, i) => String(rows[i]!.rows) });
});
