/**
 * LDAP sign-in (issue 38): the login form of an LDAP provider posted to the service, end to
 * end to the redirect to the client (the directory's bind, search and bind as the person, the
 * link found, the interaction finished), against the baseline of a bare ldapts search-and-bind
 * against the same slapd (a new connection, the bind account's bind, the search, the person's
 * bind, as the service does each sign-in) from this process. slapd (test/support/slapd.ts),
 * the service and this process are one process tree on this machine.
 *
 * Each measured sign-in of the service starts untimed (the authorization request, the login
 * page, the provider's button); the form's POST and the redirects after it are timed. The
 * people were created at a first sign-in each (auto-creation) during the warm-up, so the runs
 * measure the sign-in of a linked person. ldap:// without TLS on both sides, so that the
 * ratio is the service's own cost rather than handshakes'. BENCH_LDAP_CONCURRENCY in flight
 * for BENCH_SECONDS, ROUNDS rounds alternating service and baseline.
 *
 * Figures: sign-ins per second (the service's: whole flows, its untimed steps included), p50
 * and p99, the service's over the baseline's, and CPU per sign-in of the service's process,
 * of slapd and of this process.
 *
 * Knobs: BENCH_SECONDS (5), BENCH_LDAP_CONCURRENCY (4), BENCH_LDAP_USERS (16), BENCH_DATABASE_URL.
 */
import { Client } from "ldapts";
import { performance } from "node:perf_hooks";
import { escapeFilterValue } from "../src/upstream-idps/ldap.js";
import { BASE_DN, BIND_DN, BIND_PASSWORD, LDAP_ATTRIBUTES, startSlapd, type Directory } from "../test/support/slapd.js";
import { createBenchDatabase } from "./database.js";
import { requestJson } from "./http-json.js";
import { closedLoop, type Measurement } from "./measure.js";
import { closeLoginSockets, expect, loginPage, seedLogin, send, toClient, type LoginSeed } from "./oidc/login.js";
import { processCpuMs } from "./processes.js";
import { machineLine, writeReport } from "./report.js";
import { startService, type ServiceUnderTest } from "./service.js";
import { DATABASE_URL, MEASURE_SECONDS, WARMUP_SECONDS, wholeNumber } from "./settings.js";

const CONCURRENCY = wholeNumber("BENCH_LDAP_CONCURRENCY", 4, 1, 256);
const USERS = wholeNumber("BENCH_LDAP_USERS", 16, 1, 10_000);
const ROUNDS = 2;
const PASSWORD = "Ldap-bench-pw-1";

const log = (line: string) => process.stderr.write(`bench:ldap: ${line}\n`);
const uid = (n: number) => `ldap-bench-${n % USERS}`;

async function createProvider(service: ServiceUnderTest, dir: Directory): Promise<string> {
  const res = await requestJson(service.port, "POST", "/resources/v3alpha/idps/ldap", {
    headers: service.headers,
    body: {
      idp: { name: "Directory", options: { isAutoCreation: true } },
      config: {
        servers: [dir.ldapUrl],
        baseDn: BASE_DN,
        bindDn: BIND_DN,
        bindPassword: BIND_PASSWORD,
        userBase: "ou=people",
        userObjectClasses: ["inetOrgPerson"],
        userFilters: ["uid"],
        attributes: LDAP_ATTRIBUTES,
      },
    },
  });
  if (res.status !== 201) throw new Error(`creating the LDAP provider: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { details: { id: string } }).details.id;
}

/** The latencies of the LDAP form's POST alone (to its 303), of the service's sign-ins since the last take. */
const formPosts: number[] = [];

/** One sign-in through the service; the time from the form's POST to the redirect to the client. */
async function serviceSignIn(seed: LoginSeed, idpId: string, n: number): Promise<number> {
  const jar = new Map<string, string>();
  const { login, csrf } = await loginPage(seed, jar);
  expect(await send(seed, jar, "POST", `${login}/idp/start`, { csrf, idpId }), 200, "the provider's button");
  const started = performance.now();
  const posted = expect(await send(seed, jar, "POST", `${login}/idp/ldap`, { csrf, idpId, loginName: uid(n), password: PASSWORD }), 303, "the LDAP form");
  formPosts.push(performance.now() - started);
  await toClient(seed, jar, posted);
  return performance.now() - started;
}

/** The same check with ldapts alone, as the service makes it. */
async function bareSignIn(dir: Directory, n: number): Promise<number> {
  const started = performance.now();
  const client = new Client({ url: dir.ldapUrl, timeout: 10_000, connectTimeout: 10_000 });
  try {
    await client.bind(BIND_DN, BIND_PASSWORD);
    const { searchEntries } = await client.search(`ou=people,${BASE_DN}`, {
      scope: "sub",
      filter: `(&(objectClass=inetOrgPerson)(|(uid=${escapeFilterValue(uid(n))})))`,
      attributes: Object.values(LDAP_ATTRIBUTES),
      sizeLimit: 2,
    });
    if (searchEntries.length !== 1) throw new Error(`${uid(n)}: ${searchEntries.length} entries`);
    await client.bind(searchEntries[0]!.dn, PASSWORD);
  } finally {
    await client.unbind().catch(() => undefined);
  }
  return performance.now() - started;
}

interface Round extends Measurement {
  cpu: { service?: number; slapd?: number; bench?: number };
  /** The service's rounds: p50 and p99 of the LDAP form's POST alone. */
  formPost?: { p50Ms: number; p99Ms: number };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

/** A closed loop whose latencies are the timed part of each call, with the CPU each process spent per success (µs). */
async function measured(seconds: number, pids: { service?: number; slapd?: number }, call: (n: number) => Promise<number>): Promise<Round> {
  const before = { service: processCpuMs(pids.service), slapd: processCpuMs(pids.slapd), bench: process.cpuUsage() };
  formPosts.length = 0;
  const timed: number[] = [];
  const m = await closedLoop(CONCURRENCY, seconds, async (n) => {
    timed.push(await call(n));
    return true;
  });
  const per = (ms: number | undefined) => (ms === undefined || m.ok === 0 ? undefined : (ms * 1000) / m.ok);
  const after = { service: processCpuMs(pids.service), slapd: processCpuMs(pids.slapd), bench: process.cpuUsage(before.bench) };
  return {
    ...m,
    p50Ms: percentile(timed, 50),
    p99Ms: percentile(timed, 99),
    ...(formPosts.length > 0 && { formPost: { p50Ms: percentile(formPosts, 50), p99Ms: percentile(formPosts, 99) } }),
    cpu: {
      service: per(after.service !== undefined && before.service !== undefined ? after.service - before.service : undefined),
      slapd: per(after.slapd !== undefined && before.slapd !== undefined ? after.slapd - before.slapd : undefined),
      bench: per((after.bench.user + after.bench.system) / 1000),
    },
  };
}

function report(service: Round[], bare: Round[]): string {
  const best = (rounds: Round[]) => rounds.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
  const s = best(service);
  const b = best(bare);
  const us = (v: number | undefined) => (v === undefined ? "n/a" : v.toFixed(0));
  const row = (name: string, r: Round) =>
    `| ${name} | ${r.requestsPerSecond.toFixed(1)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.errors} | ${us(r.cpu.service)} | ${us(r.cpu.slapd)} | ${us(r.cpu.bench)} |`;
  return [
    "# LDAP sign-in",
    "",
    machineLine(),
    "",
    `slapd on 127.0.0.1 (ldap://), ${USERS} people, ${CONCURRENCY} sign-ins in flight, ${ROUNDS} rounds of ${MEASURE_SECONDS} s each, the best shown. The service's latencies: the login form's POST to the redirect to the client (a linked person); its rate and CPU: the whole flow (authorization request, login page and button too). The baseline's: ldapts's bind, search and bind on a new connection.`,
    "",
    "| load | sign-ins/s | p50 ms | p99 ms | errors | service CPU µs/sign-in | slapd CPU µs/sign-in | bench CPU µs/sign-in |",
    "|---|---|---|---|---|---|---|---|",
    row("ldapts search and bind (baseline)", b),
    row("LDAP sign-in through the service", s),
    `| the LDAP form's POST alone (of those sign-ins) | — | ${s.formPost?.p50Ms.toFixed(1) ?? "n/a"} | ${s.formPost?.p99Ms.toFixed(1) ?? "n/a"} | — | — | — | — |`,
    "",
    `Service ÷ baseline: ${(s.requestsPerSecond / b.requestsPerSecond).toFixed(2)} of the rate, ${(s.p50Ms / b.p50Ms).toFixed(1)}× the p50. The form's POST alone (the directory's three operations, the provider read, the person kept for the interaction): baseline p50 ÷ its p50 = ${s.formPost ? (b.p50Ms / s.formPost.p50Ms).toFixed(2) : "n/a"}.`,
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  const people = Array.from({ length: USERS }, (_, n) => ({
    uid: uid(n),
    cn: `Bench Person ${n}`,
    givenName: "Bench",
    sn: `Person ${n}`,
    mail: `${uid(n)}@ldap.example`,
    password: PASSWORD,
  }));
  const dir = await startSlapd(people);
  const database = await createBenchDatabase(DATABASE_URL);
  let service: ServiceUnderTest | undefined;
  try {
    service = await startService(database.url, {
      PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
      PLATFORM_LOGIN_RATE_PER_IP: "0",
      PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "0",
    });
    const seed = await seedLogin(service);
    const idpId = await createProvider(service, dir);
    // Every person's first sign-in creates their account: the runs then measure linked people.
    for (let n = 0; n < USERS; n++) await serviceSignIn(seed, idpId, n);
    const pids = { service: service.pid, slapd: dir.pid };
    log("warm-up");
    await measured(WARMUP_SECONDS, pids, (n) => serviceSignIn(seed, idpId, n));
    await measured(WARMUP_SECONDS, pids, (n) => bareSignIn(dir, n));
    const rounds = { service: [] as Round[], bare: [] as Round[] };
    for (let r = 0; r < ROUNDS; r++) {
      log(`round ${r + 1} of ${ROUNDS}`);
      rounds.service.push(await measured(MEASURE_SECONDS, pids, (n) => serviceSignIn(seed, idpId, n)));
      rounds.bare.push(await measured(MEASURE_SECONDS, pids, (n) => bareSignIn(dir, n)));
    }
    const text = report(rounds.service, rounds.bare);
    process.stdout.write(text);
    log(`written to ${await writeReport(text)}`);
  } finally {
    closeLoginSockets();
    await service?.stop();
    await database.drop();
    await dir.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
