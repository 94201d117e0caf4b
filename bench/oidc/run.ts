/**
 * npm run bench:oidc: machine-to-machine OAuth of the service (client_credentials, our
 * introspection and userinfo) against node-oidc-provider standalone (bench/oidc/baseline-provider.ts),
 * each scenario at CONNECTIONS HTTP/1.1 connections; a Markdown table to stdout and to
 * bench/results/oidc-<date>.md.
 *
 * Process tree: the baseline provider (one child for the whole run); the service with
 * RS256 on a fresh database, then (stopped first) the service with ES256 on a second fresh one.
 */
import { performance } from "node:perf_hooks";
import { decodeProtectedHeader } from "jose";
import { createBenchDatabase, type BenchDatabase } from "../database.js";
import { closeIdleSockets, requestJson, type Created } from "../http-json.js";
import { loadHttp1, type Http1Request } from "../load-http1.js";
import { closedLoop, type Measurement } from "../measure.js";
import { cleanupStack, processCpuMs } from "../processes.js";
import { machineLine } from "../report.js";
import { startService, type ServiceUnderTest } from "../service.js";
import { DATABASE_URL, MEASURE_SECONDS, WARMUP_SECONDS } from "../settings.js";
import { startArgon2Baseline } from "./argon2.js";
import { startBaselineProvider, type BaselineProvider } from "./baseline.js";
import { backendPids, backendsCpuMs } from "./cpu.js";
import { basic, form, FORM, send, type Answer } from "./http-form.js";
import { closeLoginSockets, LOGIN_CONCURRENCY, passwordLogin, seedLogin, type LoginSeed } from "./login.js";
import { report, writeOidcReport, type OidcRow, type Run } from "./report.js";
import { BASELINE_API, BASELINE_CLIENT, BASELINE_RESOURCES, BASELINE_SCOPE } from "./shared.js";

const log = (message: string) => process.stderr.write(`bench:oidc: ${message}\n`);

type Alg = "RS256" | "ES256";

/** One side of a scenario: where the load goes, what it sends, what a good answer is. */
interface Side {
  port: number;
  pid: number | undefined;
  /** The PostgreSQL database it works on (the service's), for its backends' CPU. */
  database?: string;
  request: Http1Request;
  /** An error message for a bad (2xx) answer, or undefined. */
  check(body: unknown): string | undefined;
}

interface Scenario {
  name: string;
  /** What the baseline row does (the ratio's denominator). */
  compares: string;
  /** Built just before the scenario runs: read scenarios issue their token then. */
  prepare(): Promise<{ service: Side; baseline: Side }>;
}

// ---------------------------------------------------------------- measuring

/** A warm-up run whose numbers are dropped, then the measured run with the CPU of the server and of PostgreSQL. */
async function measure(label: string, side: Pick<Side, "pid" | "database">, load: (seconds: number) => Promise<Measurement>): Promise<Run> {
  const serverPid = side.pid;
  await load(WARMUP_SECONDS);
  // The pool's connections are open after the warm-up; connections opened later are not counted.
  const pids = side.database === undefined ? [] : await backendPids(DATABASE_URL, side.database);
  const cpu = process.cpuUsage();
  const server0 = processCpuMs(serverPid);
  const pg0 = backendsCpuMs(pids);
  const started = performance.now();
  const result: Run = await load(MEASURE_SECONDS);
  const wallS = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const server1 = processCpuMs(serverPid);
  const pg1 = backendsCpuMs(pids);
  result.loadGeneratorCpu = (used.user + used.system) / 1e6 / wallS;
  if (server0 !== undefined && server1 !== undefined && result.ok > 0) {
    result.serverCpuUs = ((server1 - server0) * 1000) / result.ok;
    result.serverCores = (server1 - server0) / 1000 / wallS;
    result.perCore = result.serverCores > 0 ? result.requestsPerSecond / result.serverCores : undefined;
  }
  if (side.database !== undefined && pg0 !== undefined && pg1 !== undefined && pg1 >= pg0 && result.ok > 0)
    result.postgresCpuUs = ((pg1 - pg0) * 1000) / result.ok;
  log(
    `${label}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms, ` +
      `${result.errors} errors, server ${result.serverCpuUs?.toFixed(0) ?? "?"} µs/req on ${result.serverCores?.toFixed(2) ?? "?"} cores, ` +
      `PostgreSQL ${result.postgresCpuUs?.toFixed(0) ?? "?"} µs/req, load generator ${result.loadGeneratorCpu.toFixed(2)} cores`,
  );
  return result;
}

/** One call first: anything but a good 2xx answer stops the run before any load. */
async function smoke(label: string, side: Side): Promise<unknown> {
  const request = side.request(0);
  let answer: Answer;
  try {
    answer = await send(side.port, request);
  } catch (error) {
    throw new Error(`${label}: ${request.method} ${request.path} failed: ${String(error)}`, { cause: error });
  }
  if (answer.status < 200 || answer.status > 299)
    throw new Error(`${label}: ${request.method} ${request.path} answered ${answer.status} ${JSON.stringify(answer.body)}`);
  const problem = side.check(answer.body);
  if (problem) throw new Error(`${label}: ${request.method} ${request.path}: ${problem}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

async function runScenario(s: Scenario): Promise<OidcRow> {
  const { service, baseline } = await s.prepare();
  await smoke(`${s.name} (service)`, service);
  await smoke(`${s.name} (baseline)`, baseline);
  const base = await measure(`${s.name} baseline`, baseline, (sec) => loadHttp1(baseline.port, baseline.request, sec));
  const result = await measure(`${s.name} service`, service, (sec) => loadHttp1(service.port, service.request, sec));
  // A read answers 200 {"active": false} too: the token must still be good after the load.
  await smoke(`${s.name} (service, after the load)`, service);
  await smoke(`${s.name} (baseline, after the load)`, baseline);
  return { scenario: s.name, compares: s.compares, result, baseline: base };
}

// ---------------------------------------------------------------- checks

function tokenCheck(format: "opaque" | "jwt", alg?: Alg) {
  return (body: unknown): string | undefined => {
    const token = (body as { access_token?: unknown } | undefined)?.access_token;
    if (typeof token !== "string" || token.length === 0) return "no access_token";
    const parts = token.split(".").length;
    if (format === "opaque") return parts === 3 ? "a JWT where an opaque token was expected" : undefined;
    if (parts !== 3) return "an opaque token where a JWT was expected";
    const header = decodeProtectedHeader(token);
    if (header.alg !== alg) return `signed with ${header.alg}, not ${alg}`;
    if (header.typ !== "at+jwt") return `typ ${header.typ}, not at+jwt`;
    return undefined;
  };
}

const activeCheck = (body: unknown) => ((body as { active?: unknown } | undefined)?.active === true ? undefined : "the token is not active");
const userinfoCheck = (body: unknown) => (typeof (body as { sub?: unknown } | undefined)?.sub === "string" ? undefined : "no sub");

// ---------------------------------------------------------------- the service's side

/** Everything a service needs for the scenarios: two machine users with secrets, an API app of a project. */
interface ServiceSeed {
  service: ServiceUnderTest;
  database: string;
  alg: Alg;
  /** A Basic header per machine user, by its accessTokenType. */
  machine: { opaque: string; jwt: string };
  /** The API app's Basic header: it introspects. */
  api: string;
  /** The token request's scope: openid, profile and the project's audience. */
  scope: string;
}

async function seedService(service: ServiceUnderTest, database: string, alg: Alg): Promise<ServiceSeed> {
  const call = async (method: string, path: string, status: number, body?: unknown) => {
    const res = await requestJson(service.port, method, path, { headers: service.headers, body });
    if (res.status !== status) throw new Error(`seeding: ${method} ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const projectId = ((await call("POST", "/resources/v3alpha/projects", 201, { name: "bench-oidc" })) as Created).details.id;
  const app = (await call("POST", `/resources/v3alpha/projects/${projectId}/apps`, 201, {
    name: "bench-api",
    api: { authMethodType: "API_AUTH_METHOD_TYPE_BASIC" },
  })) as { clientId: string; clientSecret: string };
  const machine = async (username: string, accessTokenType: string) => {
    const id = ((await call("POST", "/resources/v3alpha/users", 201, { username, machine: { name: username, accessTokenType } })) as Created).details.id;
    const secret = ((await call("POST", `/resources/v3alpha/users/${id}/_generate_secret`, 200)) as { clientSecret: string }).clientSecret;
    return basic(username, secret);
  };
  return {
    service,
    database,
    alg,
    machine: { opaque: await machine("bench-opaque", "ACCESS_TOKEN_TYPE_BEARER"), jwt: await machine("bench-jwt", "ACCESS_TOKEN_TYPE_JWT") },
    api: basic(app.clientId, app.clientSecret),
    scope: `openid profile urn:platform:iam:org:project:id:${projectId}:aud`,
  };
}

function serviceToken(seed: ServiceSeed, format: "opaque" | "jwt"): Side {
  const body = form({ grant_type: "client_credentials", scope: seed.scope });
  const headers = { host: seed.service.headers.host, authorization: seed.machine[format], "content-type": FORM };
  return {
    port: seed.service.port,
    pid: seed.service.pid,
    database: seed.database,
    request: () => ({ method: "POST", path: "/oauth/v2/token", headers, body }),
    check: tokenCheck(format, seed.alg),
  };
}

async function serviceIssued(seed: ServiceSeed, format: "opaque" | "jwt"): Promise<string> {
  return ((await smoke(`issuing a ${format} token for the reads`, serviceToken(seed, format))) as { access_token: string }).access_token;
}

async function serviceIntrospection(seed: ServiceSeed, format: "opaque" | "jwt"): Promise<Side> {
  const body = form({ token: await serviceIssued(seed, format) });
  const headers = { host: seed.service.headers.host, authorization: seed.api, "content-type": FORM };
  return {
    port: seed.service.port,
    pid: seed.service.pid,
    database: seed.database,
    request: () => ({ method: "POST", path: "/oauth/v2/introspect", headers, body }),
    check: activeCheck,
  };
}

async function serviceUserinfo(seed: ServiceSeed, format: "opaque" | "jwt"): Promise<Side> {
  const headers = { host: seed.service.headers.host, authorization: `Bearer ${await serviceIssued(seed, format)}` };
  return {
    port: seed.service.port,
    pid: seed.service.pid,
    database: seed.database,
    request: () => ({ method: "GET", path: "/oidc/v1/userinfo", headers }),
    check: userinfoCheck,
  };
}

// ---------------------------------------------------------------- the baseline's side

function baselineToken(b: BaselineProvider, resource: string, format: "opaque" | "jwt", alg?: Alg): Side {
  const body = form({ grant_type: "client_credentials", scope: BASELINE_SCOPE, resource });
  const headers = { authorization: basic(BASELINE_CLIENT.id, BASELINE_CLIENT.secret), "content-type": FORM };
  return { port: b.port, pid: b.pid, request: () => ({ method: "POST", path: "/token", headers, body }), check: tokenCheck(format, alg) };
}

/** The provider introspects opaque tokens only (it refuses structured ones): the baseline of both introspections. */
async function baselineIntrospection(b: BaselineProvider): Promise<Side> {
  const token = ((await smoke("baseline: issuing an opaque token", baselineToken(b, BASELINE_RESOURCES.opaque, "opaque"))) as { access_token: string })
    .access_token;
  const body = form({ token });
  const headers = { authorization: basic(BASELINE_API.id, BASELINE_API.secret), "content-type": FORM };
  return { port: b.port, pid: b.pid, request: () => ({ method: "POST", path: "/token/introspection", headers, body }), check: activeCheck };
}

/** The provider's userinfo with an opaque access token of a grant with openid profile (minted through its models). */
async function baselineUserinfo(b: BaselineProvider): Promise<Side> {
  const minted = await send(b.controlPort, { method: "POST", path: "/userinfo-token", headers: {} });
  const token = (minted.body as { token?: unknown } | undefined)?.token;
  if (minted.status !== 200 || typeof token !== "string")
    throw new Error(`baseline: minting a userinfo token failed: ${minted.status} ${JSON.stringify(minted.body)}`);
  const headers = { authorization: `Bearer ${token}` };
  return { port: b.port, pid: b.pid, request: () => ({ method: "GET", path: "/me", headers }), check: userinfoCheck };
}

// ---------------------------------------------------------------- scenarios

const BASE_TOKEN = "provider's client_credentials (Basic, in-memory adapter)";
const BASE_INTROSPECT = "provider's introspection of an opaque client_credentials token (it refuses JWTs)";
const BASE_USERINFO = "provider's userinfo, opaque token of an openid grant (it refuses client_credentials tokens and JWTs)";

function rs256Scenarios(seed: ServiceSeed, b: BaselineProvider): Scenario[] {
  return [
    {
      name: "client_credentials, opaque",
      compares: `${BASE_TOKEN}, opaque`,
      prepare: async () => ({ service: serviceToken(seed, "opaque"), baseline: baselineToken(b, BASELINE_RESOURCES.opaque, "opaque") }),
    },
    {
      name: "client_credentials, JWT RS256",
      compares: `${BASE_TOKEN}, JWT RS256`,
      prepare: async () => ({ service: serviceToken(seed, "jwt"), baseline: baselineToken(b, BASELINE_RESOURCES.jwtRs256, "jwt", "RS256") }),
    },
    {
      name: "introspection, opaque",
      compares: BASE_INTROSPECT,
      prepare: async () => ({ service: await serviceIntrospection(seed, "opaque"), baseline: await baselineIntrospection(b) }),
    },
    {
      name: "introspection, JWT RS256",
      compares: BASE_INTROSPECT,
      prepare: async () => ({ service: await serviceIntrospection(seed, "jwt"), baseline: await baselineIntrospection(b) }),
    },
    {
      name: "userinfo, opaque",
      compares: BASE_USERINFO,
      prepare: async () => ({ service: await serviceUserinfo(seed, "opaque"), baseline: await baselineUserinfo(b) }),
    },
    {
      name: "userinfo, JWT RS256",
      compares: BASE_USERINFO,
      prepare: async () => ({ service: await serviceUserinfo(seed, "jwt"), baseline: await baselineUserinfo(b) }),
    },
  ];
}

function es256Scenarios(seed: ServiceSeed, b: BaselineProvider): Scenario[] {
  return [
    {
      name: "client_credentials, JWT ES256",
      compares: `${BASE_TOKEN}, JWT ES256`,
      prepare: async () => ({ service: serviceToken(seed, "jwt"), baseline: baselineToken(b, BASELINE_RESOURCES.jwtEs256, "jwt", "ES256") }),
    },
    {
      name: "introspection, JWT ES256",
      compares: BASE_INTROSPECT,
      prepare: async () => ({ service: await serviceIntrospection(seed, "jwt"), baseline: await baselineIntrospection(b) }),
    },
    {
      name: "userinfo, JWT ES256",
      compares: BASE_USERINFO,
      prepare: async () => ({ service: await serviceUserinfo(seed, "jwt"), baseline: await baselineUserinfo(b) }),
    },
  ];
}

/** Only these scenarios (comma-separated names, e.g. "userinfo, opaque" or "password login"); empty: all. */
const ONLY = (process.env.BENCH_OIDC_SCENARIOS ?? "")
  .split(",")
  .map((s) => s.trim().toLowerCase())
  .filter(Boolean);
const named = (name: string) => ONLY.length === 0 || ONLY.some((o) => name.toLowerCase().replace(/,/g, "").includes(o.replace(/,/g, "")));
const chosen = (list: Scenario[]) => list.filter((s) => named(s.name));

// ---------------------------------------------------------------- password login

const LOGIN = `password login, ${LOGIN_CONCURRENCY} concurrent`;

/**
 * Whole sign-ins (login.ts) at LOGIN_CONCURRENCY against the service's own Argon2id
 * verification rate in a child process (argon2-baseline.ts): the per-core ratio is the
 * share of a login's service CPU that the password hash alone would explain.
 */
async function runLogin(seed: LoginSeed, side: Pick<Side, "pid" | "database">): Promise<OidcRow> {
  const requests = await passwordLogin(seed, 0).catch((error: unknown) => {
    throw new Error(`${LOGIN} (service): ${String(error)}`);
  });
  const argon2 = await startArgon2Baseline();
  try {
    const base = await measure(`${LOGIN} baseline`, { pid: argon2.pid }, (sec) => argon2.run(sec));
    let firstError: unknown;
    const login = async (n: number) => {
      try {
        await passwordLogin(seed, n);
        return true;
      } catch (error) {
        firstError ??= error;
        return false;
      }
    };
    const result = await measure(`${LOGIN} service`, side, (sec) => closedLoop(LOGIN_CONCURRENCY, sec, login));
    if (firstError) log(`${LOGIN}: first failure: ${String(firstError)}`);
    await passwordLogin(seed, 1);
    return {
      scenario: LOGIN,
      compares: `Argon2id verification of one hash by the service's PasswordHasher (bench/settings.ts ARGON2, the cost the service runs with) at ${LOGIN_CONCURRENCY} concurrent, in a child process; the service row's req/s are logins/s (${requests} HTTP requests each: authorize, login page, login name, password, resume, consent, resume, token)`,
      result,
      baseline: base,
    };
  } finally {
    await argon2.stop();
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const machine = machineLine();
  const { cleanups, cleanup } = cleanupStack(log);
  try {
    const baseline = await startBaselineProvider();
    cleanups.push(() => baseline.stop());
    cleanups.push(() => closeIdleSockets());
    cleanups.push(() => closeLoginSockets());
    log(`baseline provider on port ${baseline.port}`);

    const rows: OidcRow[] = [];
    for (const alg of ["RS256", "ES256"] as const) {
      const scenarios = (seed: ServiceSeed) => (alg === "RS256" ? rs256Scenarios : es256Scenarios)(seed, baseline);
      // Which scenarios run decides whether this service is needed at all.
      const withLogin = alg === "RS256" && named(LOGIN);
      if (chosen(scenarios({} as ServiceSeed)).length === 0 && !withLogin) continue;
      const database: BenchDatabase = await createBenchDatabase(DATABASE_URL);
      const dropDatabase = () => database.drop();
      cleanups.push(dropDatabase);
      // Logins would hit the per-address and per-login-name limits of a minute at once.
      const service = await startService(database.url, {
        PLATFORM_OIDC_SIGNING_ALG: alg,
        PLATFORM_LOGIN_RATE_PER_IP: "1000000",
        PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000000",
      });
      const stopService = () => service.stop();
      cleanups.push(stopService);
      const seed = await seedService(service, database.name, alg);
      log(`service (${alg}) on port ${service.port}, database ${database.name}`);
      for (const s of chosen(scenarios(seed))) rows.push(await runScenario(s));
      if (withLogin) rows.push(await runLogin(await seedLogin(service), { pid: service.pid, database: database.name }));
      // One service at a time: the first is gone before the second starts.
      await service.stop();
      await database.drop();
      cleanups.splice(cleanups.indexOf(stopService), 1);
      cleanups.splice(cleanups.indexOf(dropDatabase), 1);
    }
    if (rows.length === 0) throw new Error(`BENCH_OIDC_SCENARIOS names no scenario: ${ONLY.join(", ")}`);

    const text = report(rows, machine);
    process.stdout.write(text);
    log(`written to ${await writeOidcReport(text)}`);
    const errors = rows.reduce((sum, r) => sum + r.result.errors + r.baseline.errors, 0);
    if (errors > 0) log(`${errors} requests failed: the numbers above are not trustworthy`);
    return errors > 0 ? 1 : 0;
  } finally {
    await cleanup();
  }
}

process.exitCode = await main();
