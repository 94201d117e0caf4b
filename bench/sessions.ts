/**
 * Sessions (issue 20, section 6), two figures measured in one run on PostgreSQL:
 *
 * 1. CreateSession with a user check (the login name) and a password check over REST,
 *    BENCH_SESSION_CONCURRENCY calls in flight (autocannon's connections), spread round-robin over
 *    BENCH_SESSION_USERS users created through the API with the password, against the
 *    baseline: the service's own PasswordHasher (src/crypto/passwords.ts, settings.ts ARGON2,
 *    what the service is started with) verifying the same password against a hash of the same
 *    cost, as many in flight, in this process (idle otherwise then; it and the service inherit
 *    one UV_THREADPOOL_SIZE, so both verify on as many threads). One service process; a warm-up
 *    of each, then ROUNDS rounds alternating service and baseline. The ratio sessions ÷
 *    verifications is what the rest of a CreateSession leaves of the hash's rate (aim ≥ 0.8).
 * 2. PatchSession with a TOTP check, with BENCH_WORKERS service processes (node:cluster
 *    workers, default one per core), BENCH_PATCH_CONCURRENCY calls in flight, each patching a
 *    session with its current token and the code of the current 30-second step; req/s, and
 *    CPU per request of the service (primary and workers, from /proc) and of its PostgreSQL
 *    backends. Replays: the service takes a user's code once, only for a step past the last
 *    it took (domain/user-factor/checks.ts), so every request goes to another of
 *    BENCH_TOTP_USERS users, each with a session and a TOTP authenticator verified with the
 *    step before the seeding's (so that it may sign in in the seeding's step too). The users
 *    wait in a first-in-first-out queue; one is taken only when the step it last signed in
 *    with is past, and goes back with its new token. The warm-up ends at the start of a step
 *    and the measured round begins there, so that every user is available again; a round
 *    ends early when the queue's head was already used in the current step (the pool ran
 *    out: the table says after how long; BENCH_TOTP_USERS must exceed req/s × BENCH_SECONDS,
 *    or req/s × 30 for rounds longer than a step). Sessions are created with the user check
 *    alone: the password's Argon2id would only slow the seeding, and a patch costs the same
 *    either way. The load comes from node:http in this process (its CPU is in the table).
 *
 * Both services run without the per-login-name and per-session limits
 * (PLATFORM_LOGIN_RATE_PER_LOGIN_NAME=0, PLATFORM_SESSION_RATE_PER_SESSION=0), each on a
 * fresh database; users' email addresses are verified, so no message is written.
 *
 * Knobs: BENCH_SECONDS (each round, default 5), BENCH_SESSION_CONCURRENCY (number of CPUs),
 * BENCH_SESSION_USERS (100), BENCH_WORKERS (number of CPUs), BENCH_PATCH_CONCURRENCY (64),
 * BENCH_TOTP_USERS (10000; 0 measures CreateSession only), BENCH_DATABASE_URL.
 */
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import { Secret, TOTP } from "otpauth";
import { createPasswordHasher } from "../src/crypto/passwords.js";
import { analyze, createBenchDatabase } from "./database.js";
import { requestJson, type Created, type JsonResponse } from "./http-json.js";
import { loadHttp1 } from "./load-http1.js";
import { closedLoop, summarize, type Measurement } from "./measure.js";
import { backendPids, backendsCpuMs } from "./oidc/cpu.js";
import { cleanupStack, processCpuMs, threadsCpuMs } from "./processes.js";
import { machineLine } from "./report.js";
import { callApi, startService, type ServiceUnderTest } from "./service.js";
import { ARGON2, CONNECTIONS, DATABASE_URL, MEASURE_SECONDS, USER_PASSWORD, WARMUP_SECONDS, wholeNumber } from "./settings.js";

const CPUS = os.availableParallelism();
const CONCURRENCY = wholeNumber("BENCH_SESSION_CONCURRENCY", CPUS, 1, 1024);
const LOGIN_USERS = wholeNumber("BENCH_SESSION_USERS", 100, 1, 100_000);
const WORKERS = wholeNumber("BENCH_WORKERS", CPUS, 1, 256);
const PATCH_CONCURRENCY = wholeNumber("BENCH_PATCH_CONCURRENCY", CONNECTIONS, 1, 1024);
/** 0 skips PatchSession. */
const TOTP_USERS = wholeNumber("BENCH_TOTP_USERS", 10_000, 0, 1_000_000);
const ROUNDS = 2;
/** RFC 6238's step, as the service's (domain/user-factor/totp.ts). */
const STEP_MS = 30_000;
/** Users seeded at once: each takes four calls in a row. */
const SEED_IN_FLIGHT = 8;

const log = (line: string) => process.stderr.write(`bench:sessions: ${line}\n`);

const unlimited = { PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "0", PLATFORM_SESSION_RATE_PER_SESSION: "0" };

/** PatchSession's own connections: http-json's 8 would cap the calls in flight. */
const agent = new http.Agent({ keepAlive: true, maxSockets: PATCH_CONCURRENCY });

/** Runs `call(n)` for n below `total`, `width` at a time. */
async function inParallel(total: number, width: number, call: (n: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, total) }, async () => {
      for (let n = next++; n < total; n = next++) await call(n);
    }),
  );
}

const human = (username: string, extra: Record<string, unknown>) => ({
  username,
  human: { profile: { givenName: "Bench", familyName: "Session" }, email: { address: `${username}@bench.example`, isVerified: true }, ...extra },
});

// ---------------------------------------------------------------- CreateSession

/** CPU (ms, cumulative) where it could be read: the measured process by thread kind, and what ran beside it. */
type CpuSample = Partial<Record<CpuPart, number>>;
type CpuPart = "total" | "main" | "threadpool" | "other" | "loadGenerator" | "postgres";

/** What the rounds of one side add up to; CPU only where it could be read. */
interface Tally {
  ok: number;
  seconds: number;
  errors: number;
  cpuMs: Partial<Record<CpuPart, number>>;
  p50: number[];
  p99: number[];
}

const tally = (): Tally => ({ ok: 0, seconds: 0, errors: 0, cpuMs: {}, p50: [], p99: [] });

/** One measured round of `load`, added to `into` with the CPU `sample` counted meanwhile (a part missing from either reading is dropped). */
async function round(into: Tally, sample: () => CpuSample, load: () => Promise<Measurement>): Promise<Measurement> {
  const before = sample();
  const m = await load();
  const after = sample();
  into.ok += m.ok;
  into.seconds += m.ok > 0 ? m.ok / m.requestsPerSecond : 0;
  into.errors += m.errors;
  for (const part of Object.keys(after) as CpuPart[]) {
    if (before[part] !== undefined && after[part] !== undefined) into.cpuMs[part] = (into.cpuMs[part] ?? 0) + after[part]! - before[part]!;
  }
  into.p50.push(m.p50Ms);
  into.p99.push(m.p99Ms);
  return m;
}

/** A process's CPU: in all, and by thread kind. */
function processSample(pid: number | undefined): CpuSample {
  const threads = threadsCpuMs(pid);
  return { total: processCpuMs(pid), ...threads };
}

let firstFailure: string | undefined;

/**
 * With autocannon, as `npm run bench` loads the service: node:http's client cost about 0.8 ms
 * of CPU per session on the same two CPUs as the service and the hashes (docs/benchmarks.md).
 * Only the status is read; the call before the rounds checks an answer in full.
 */
function createSessions(service: ServiceUnderTest, loginNames: string[], seconds: number): Promise<Measurement> {
  const headers = { ...service.headers, "content-type": "application/json" };
  return loadHttp1(
    service.port,
    (n) => ({
      method: "POST",
      path: "/resources/v3alpha/sessions",
      headers,
      body: JSON.stringify({ checks: { user: { loginName: loginNames[n % loginNames.length] }, password: { password: USER_PASSWORD } } }),
    }),
    seconds,
    CONCURRENCY,
  );
}

const ownCpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

async function measureCreateSession(): Promise<{ service: Tally; baseline: Tally }> {
  const database = await createBenchDatabase(DATABASE_URL);
  try {
    const service = await startService(database.url, unlimited);
    try {
      const loginNames = Array.from({ length: LOGIN_USERS }, (_, n) => `login-${n}`);
      log(`CreateSession: seeding ${LOGIN_USERS} users with a password…`);
      await inParallel(LOGIN_USERS, SEED_IN_FLIGHT, async (n) => {
        await callApi(service.port, service.headers, "POST", "/resources/v3alpha/users", human(loginNames[n]!, { password: USER_PASSWORD }), 201);
      });
      await analyze(database.url);
      // One call first: a wrong request fails here, not as a column of errors.
      await callApi(
        service.port,
        service.headers,
        "POST",
        "/resources/v3alpha/sessions",
        { checks: { user: { loginName: loginNames[0] }, password: { password: USER_PASSWORD } } },
        201,
      );

      const hasher = createPasswordHasher(ARGON2);
      const encoded = await hasher.hash(USER_PASSWORD);
      const verify = (seconds: number) => closedLoop(CONCURRENCY, seconds, async () => (await hasher.verify(encoded, USER_PASSWORD)).ok);
      const totals = { service: tally(), baseline: tally() };
      await createSessions(service, loginNames, WARMUP_SECONDS);
      await verify(WARMUP_SECONDS);
      for (let r = 0; r < ROUNDS; r++) {
        log(`CreateSession round ${r + 1}/${ROUNDS}: the service…`);
        // The pool's connections, open since the warm-up; read again each round, as a connection
        // of the set-up (the analyze's, say) may have ended since.
        const pgPids = await backendPids(DATABASE_URL, database.name);
        const s = await round(
          totals.service,
          () => ({ ...processSample(service.pid), loadGenerator: ownCpuMs(), postgres: backendsCpuMs(pgPids) }),
          () => createSessions(service, loginNames, MEASURE_SECONDS),
        );
        log(`  ${s.requestsPerSecond.toFixed(1)} sessions/s, ${s.errors} errors; the baseline…`);
        const b = await round(
          totals.baseline,
          () => ({ ...threadsCpuMs(process.pid), total: ownCpuMs() }),
          () => verify(MEASURE_SECONDS),
        );
        log(`  ${b.requestsPerSecond.toFixed(1)} verifications/s`);
      }
      if (totals.service.ok === 0) throw new Error("no CreateSession succeeded (the call before the rounds did)");
      return totals;
    } finally {
      await service.stop();
    }
  } finally {
    await database.drop();
  }
}

// ---------------------------------------------------------------- PatchSession with TOTP

interface TotpUser {
  sessionId: string;
  token: string;
  totp: TOTP;
  /** The step of the last code the service took from this user. */
  lastStep: number;
}

const stepNow = () => Math.floor(Date.now() / STEP_MS);
const codeOf = (user: Pick<TotpUser, "totp">, step: number) => user.totp.generate({ timestamp: step * STEP_MS });

/** A human with a verified TOTP authenticator and a session with the user check. */
async function seedTotpUser(service: ServiceUnderTest, n: number): Promise<TotpUser> {
  const { port, headers } = service;
  const created = await callApi(port, headers, "POST", "/resources/v3alpha/users", human(`totp-${n}`, {}), 201);
  const id = (created as Created).details.id;
  const { secret } = (await callApi(port, headers, "POST", `/resources/v3alpha/users/${id}/totp`, undefined, 200)) as { secret: string };
  const user = { totp: new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: STEP_MS / 1000 }) };
  let lastStep: number | undefined;
  for (let attempt = 0; lastStep === undefined; attempt++) {
    // The step before now, which the service takes too: the user may sign in in this step.
    const step = stepNow() - 1;
    const res = await requestJson(port, "POST", `/resources/v3alpha/users/${id}/totp/_verify`, { headers, body: { code: codeOf(user, step) } });
    if (res.status === 200) lastStep = step;
    // Refused only when the service's clock entered the next step meanwhile: once more, then.
    else if (attempt > 0 || res.status !== 400) throw new Error(`VerifyTOTP: ${res.status} ${JSON.stringify(res.body)}`);
  }
  const session = (await callApi(port, headers, "POST", "/resources/v3alpha/sessions", { checks: { user: { userId: id } } }, 201)) as {
    sessionId: string;
    sessionToken: string;
  };
  return { sessionId: session.sessionId, token: session.sessionToken, totp: user.totp, lastStep };
}

/** PatchSession with the code of `step`; on success the user holds the new token and the step. */
async function patchWithTotp(service: ServiceUnderTest, user: TotpUser, step: number): Promise<JsonResponse> {
  const res = await requestJson(service.port, "PATCH", `/resources/v3alpha/sessions/${user.sessionId}`, {
    agent,
    headers: service.headers,
    body: { sessionToken: user.token, checks: { totp: { code: codeOf(user, step) } } },
  });
  if (res.status === 200) {
    user.token = (res.body as { sessionToken: string }).sessionToken;
    user.lastStep = step;
  }
  return res;
}

/**
 * A closed loop of PatchSession with TOTP codes over the pool (first in, first out): until
 * `seconds` have passed, or until the head of the pool signed in in the current step already
 * (`ranOut`: the round is shorter). A user whose patch failed leaves the pool: its token may
 * be stale.
 */
async function patchSessions(service: ServiceUnderTest, pool: TotpUser[], seconds: number): Promise<Measurement & { ranOut: boolean; elapsedS: number }> {
  const latencies: number[] = [];
  let errors = 0;
  let ranOut = false;
  const start = performance.now();
  const end = start + seconds * 1000;
  const caller = async () => {
    while (!ranOut && performance.now() < end) {
      const step = stepNow();
      if (pool.length === 0 || pool[0]!.lastStep >= step) {
        ranOut = true;
        return;
      }
      const user = pool.shift()!;
      const t0 = performance.now();
      try {
        const res = await patchWithTotp(service, user, step);
        if (res.status === 200) {
          latencies.push(performance.now() - t0);
          pool.push(user);
          continue;
        }
        firstFailure ??= `${res.status} ${JSON.stringify(res.body)}`;
      } catch (error) {
        firstFailure ??= String(error);
      }
      errors++;
    }
  };
  await Promise.all(Array.from({ length: PATCH_CONCURRENCY }, caller));
  const elapsedS = (performance.now() - start) / 1000;
  return { ...summarize(latencies, errors, elapsedS), ranOut, elapsedS };
}

/** The cluster primary and the workers it forked, from /proc; undefined where there is no /proc. */
function serviceProcesses(pid: number | undefined): number[] | undefined {
  if (pid === undefined) return undefined;
  try {
    const children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean).map(Number),
    );
    return [pid, ...children];
  } catch {
    return undefined;
  }
}

function cpuOf(pids: number[] | undefined): number | undefined {
  if (pids === undefined) return undefined;
  let total = 0;
  for (const pid of pids) {
    const ms = processCpuMs(pid);
    if (ms === undefined) return undefined;
    total += ms;
  }
  return total;
}

/** The start (epoch ms) of the next step at least `leadMs` away. */
function nextStepStart(leadMs: number): number {
  const at = (Math.floor(Date.now() / STEP_MS) + 1) * STEP_MS;
  return at - leadMs < Date.now() ? at + STEP_MS : at;
}

/** Until the wall clock (the one of the TOTP steps) reads `epochMs`: a timer may fire a little early by it. */
async function until(epochMs: number): Promise<void> {
  while (Date.now() < epochMs) await new Promise((resolve) => setTimeout(resolve, epochMs - Date.now()));
}

interface PatchResult extends Measurement {
  ranOut: boolean;
  elapsedS: number;
  postgresCpuUs?: number;
}

async function measurePatchSession(): Promise<PatchResult> {
  const database = await createBenchDatabase(DATABASE_URL);
  try {
    const service = await startService(database.url, { ...unlimited, PLATFORM_WORKERS: String(WORKERS) });
    try {
      log(`PatchSession: seeding ${TOTP_USERS} users with a TOTP authenticator and a session…`);
      const seeded = performance.now();
      const pool: TotpUser[] = new Array(TOTP_USERS);
      await inParallel(TOTP_USERS, SEED_IN_FLIGHT, async (n) => {
        pool[n] = await seedTotpUser(service, n);
      });
      log(`  seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);
      await analyze(database.url);
      // The workers forked at start-up, long before now: their ids are final.
      const processes = serviceProcesses(service.pid);
      if (processes !== undefined && processes.length !== WORKERS + (WORKERS > 1 ? 1 : 0))
        throw new Error(`expected ${WORKERS} service workers, found processes ${processes.join(", ")}`);
      // One patch first: a wrong request fails here, not as a pool emptied by failures.
      const first = pool.shift()!;
      const smoke = await patchWithTotp(service, first, stepNow());
      if (smoke.status !== 200) throw new Error(`PatchSession: ${smoke.status} ${JSON.stringify(smoke.body)}`);
      pool.push(first);

      // The warm-up ends as a step begins, and the measured round starts there with every user
      // available (also when the warm-up ran out of users and stopped early).
      const stepStart = nextStepStart(WARMUP_SECONDS * 1000);
      await until(stepStart - WARMUP_SECONDS * 1000);
      log(`PatchSession warm-up (${WARMUP_SECONDS} s), then ${MEASURE_SECONDS} s from the start of a step…`);
      const warm = await patchSessions(service, pool, WARMUP_SECONDS);
      if (warm.ranOut) log(`  the warm-up ran out of users after ${warm.elapsedS.toFixed(1)} s`);
      await until(stepStart);
      // The pools' connections are open after the warm-up; connections opened later are not counted.
      const pgPids = await backendPids(DATABASE_URL, database.name);
      const loadGen0 = ownCpuMs();
      const service0 = cpuOf(processes);
      const pg0 = backendsCpuMs(pgPids);
      const result: PatchResult = await patchSessions(service, pool, MEASURE_SECONDS);
      const service1 = cpuOf(processes);
      const pg1 = backendsCpuMs(pgPids);
      result.loadGeneratorCpu = (ownCpuMs() - loadGen0) / 1000 / result.elapsedS;
      if (service0 !== undefined && service1 !== undefined && result.ok > 0) result.serverCpuUs = ((service1 - service0) * 1000) / result.ok;
      if (pg0 !== undefined && pg1 !== undefined && pg1 >= pg0 && result.ok > 0) result.postgresCpuUs = ((pg1 - pg0) * 1000) / result.ok;
      if (result.ok === 0) throw new Error(`no PatchSession succeeded: ${result.ranOut ? "the pool of users ran out at once" : firstFailure}`);
      return result;
    } finally {
      await service.stop();
    }
  } finally {
    await database.drop();
  }
}

// ---------------------------------------------------------------- main

const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(3) : "n/a");
const perSecond = (t: Tally) => (t.seconds > 0 ? t.ok / t.seconds : 0);
const worst = (values: number[]) => Math.max(...values).toFixed(1);
const cpuUs = (t: Tally, part: CpuPart = "total") => (t.cpuMs[part] === undefined || t.ok === 0 ? "n/a" : ((t.cpuMs[part]! * 1000) / t.ok).toFixed(0));
const optional = (value: number | undefined, digits: number) => (value === undefined ? "n/a" : value.toFixed(digits));

async function main(): Promise<number> {
  const { cleanups, cleanup } = cleanupStack(log);
  cleanups.push(() => agent.destroy());
  try {
    const loadAtStart = os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
    const creates = await measureCreateSession();
    const patches = TOTP_USERS > 0 ? await measurePatchSession() : undefined;
    if (firstFailure) log(`first failure: ${firstFailure}`);
    if (patches?.ranOut) log(`the pool of ${TOTP_USERS} TOTP users ran out after ${patches.elapsedS.toFixed(1)} s: raise BENCH_TOTP_USERS`);

    const pool = process.env.UV_THREADPOOL_SIZE ? `UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE}` : "UV_THREADPOOL_SIZE unset: 4 threads";
    const report = [
      "# Sessions benchmark",
      "",
      `${machineLine()} (load average at the start: ${loadAtStart}). PostgreSQL; no per-login-name or per-session limits.`,
      "",
      `CreateSession with user (login name) and password checks, REST, ${CONCURRENCY} in flight over ${LOGIN_USERS} users, one service process; ` +
        `baseline: the service's PasswordHasher verifying the password against an Argon2id hash (m=${ARGON2.memoryKiB} KiB, t=${ARGON2.iterations}, p=${ARGON2.parallelism}), ` +
        `${CONCURRENCY} in flight in the bench process (${pool}, as the service); ${ROUNDS} alternating rounds of ${MEASURE_SECONDS} s each:`,
      "",
      "| | per second | worst p50 ms | worst p99 ms | CPU µs each | errors |",
      "|---|---|---|---|---|---|",
      `| CreateSession (service process) | ${perSecond(creates.service).toFixed(1)} | ${worst(creates.service.p50)} | ${worst(creates.service.p99)} | ${cpuUs(creates.service)} | ${creates.service.errors} |`,
      `| Argon2id verification (bench process) | ${perSecond(creates.baseline).toFixed(1)} | ${worst(creates.baseline.p50)} | ${worst(creates.baseline.p99)} | ${cpuUs(creates.baseline)} | ${creates.baseline.errors} |`,
      "",
      `Ratio sessions ÷ verifications: ${ratio(perSecond(creates.service), perSecond(creates.baseline))} (aim ≥ 0.8).`,
      "",
      "Where the CPU of each call went, µs (threads from /proc: the main thread; libuv's threadpool, where the hashes run; V8's helper threads, " +
        "n/a on Node 20, whose threadpool is not named; and beside the service, the load generator in this process and the database's backends):",
      "",
      "| | main thread | threadpool | other threads | load generator | PostgreSQL |",
      "|---|---|---|---|---|---|",
      `| CreateSession | ${cpuUs(creates.service, "main")} | ${cpuUs(creates.service, "threadpool")} | ${cpuUs(creates.service, "other")} | ${cpuUs(creates.service, "loadGenerator")} | ${cpuUs(creates.service, "postgres")} |`,
      `| Argon2id verification | ${cpuUs(creates.baseline, "main")} | ${cpuUs(creates.baseline, "threadpool")} | ${cpuUs(creates.baseline, "other")} | (none) | (none) |`,
      "",
      ...(patches === undefined
        ? ["PatchSession: not measured (BENCH_TOTP_USERS=0)."]
        : [
            `PatchSession with a TOTP code, REST, ${WORKERS} service worker(s), ${PATCH_CONCURRENCY} in flight over ${TOTP_USERS} users (each at most once per 30-s step), ` +
              `measured from the start of a step after a ${WARMUP_SECONDS} s warm-up:`,
            "",
            "| workers | measured s | req/s | req/s per worker | p50 ms | p99 ms | errors | service CPU µs/req | PostgreSQL CPU µs/req | load-gen CPU |",
            "|---|---|---|---|---|---|---|---|---|---|",
            `| ${WORKERS} | ${patches.elapsedS.toFixed(1)}${patches.ranOut ? " (pool ran out)" : ""} | ${patches.requestsPerSecond.toFixed(0)} | ${(patches.requestsPerSecond / WORKERS).toFixed(0)} | ` +
              `${patches.p50Ms.toFixed(1)} | ${patches.p99Ms.toFixed(1)} | ${patches.errors} | ${optional(patches.serverCpuUs, 0)} | ${optional(patches.postgresCpuUs, 0)} | ${optional(patches.loadGeneratorCpu, 2)} |`,
          ]),
    ].join("\n");
    process.stdout.write(`${report}\n`);
    const errors = creates.service.errors + creates.baseline.errors + (patches?.errors ?? 0);
    if (errors > 0) log(`${errors} calls failed: the numbers above are not trustworthy`);
    return errors > 0 ? 1 : 0;
  } finally {
    await cleanup();
  }
}

process.exitCode = await main();
