import { readFileSync } from "node:fs";
import { EMPLOYEE_SCHEMA } from "./schema-users.js";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requestJson, type Created, type JsonResponse } from "./http-json.js";
import { freePort, startNode, waitFor } from "./processes.js";
import type { ScenarioContext } from "./scenarios.js";
import { ARGON2, HOST, MASTER_KEY, PROFILE_DIR, ROOT, SEED_IDP_POLICIES, SEED_IDPS, SEED_ORGS, SEED_TARGETS, SEED_USERS, USER_PASSWORD } from "./settings.js";

export interface ServiceUnderTest {
  port: number;
  /** The serving process (one worker: the child itself), for its CPU time. */
  pid: number | undefined;
  /** Sent on every call: the Host header selects the bootstrapped instance. */
  headers: { host: string; authorization: string };
  stop(): Promise<void>;
}

/** Node's flags of `npm start` (package.json), so that the service runs here as it runs there. */
const START_FLAGS = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start
  .split(/\s+/)
  .filter((arg) => arg.startsWith("--"));

/** The service's own environment only: nothing of the caller's PLATFORM_* settings leaks in. */
export function serviceEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("PLATFORM_") && key !== "DATABASE_URL" && key !== "LOG_LEVEL") env[key] = value;
  }
  return { ...env, ...vars };
}

/** `node dist/src/main.js` with one worker on a free port of 127.0.0.1 and a data directory of its own, ready; `env(dataDir)`: its further settings. */
async function launch(
  databaseUrl: string,
  env: (dataDir: string) => Record<string, string>,
): Promise<{ port: number; pid: number | undefined; dataDir: string; stop(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), "platform-bench-"));
  const port = await freePort();
  const child = startNode(
    join(ROOT, "dist/src/main.js"),
    serviceEnv({
      PLATFORM_PORT: String(port),
      PLATFORM_BIND: HOST,
      PLATFORM_EXTERNAL_URL: `http://localhost:${port}`,
      DATABASE_URL: databaseUrl,
      PLATFORM_MASTERKEY: MASTER_KEY,
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_WORKERS: "1",
      LOG_LEVEL: "warn",
      ...env(dataDir),
    }),
    [...START_FLAGS, ...(PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [])],
  );
  child.process.stdout!.resume();
  const stop = async () => {
    await child.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  await waitFor(child, "service", async () => (await requestJson(port, "GET", "/ready")).status === 200).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { port, pid: child.process.pid, dataDir, stop };
}

/**
 * The service on a fresh database, bootstrapped, with the administrator's token;
 * `extraEnv`: further PLATFORM_* settings (bench/oidc: PLATFORM_OIDC_SIGNING_ALG).
 */
export async function startService(databaseUrl: string, extraEnv: Record<string, string> = {}): Promise<ServiceUnderTest> {
  // Metrics stay on, as in production, so that their cost is measured; on a port of their own.
  const metricsPort = await freePort();
  const service = await launch(databaseUrl, (dataDir) => ({
    PLATFORM_ADMIN_PAT_PATH: join(dataDir, "admin.pat"),
    PLATFORM_METRICS_BIND: `${HOST}:${metricsPort}`,
    PLATFORM_PASSWORD_ARGON2_MEMORY_KIB: String(ARGON2.memoryKiB),
    PLATFORM_PASSWORD_ARGON2_ITERATIONS: String(ARGON2.iterations),
    PLATFORM_PASSWORD_ARGON2_PARALLELISM: String(ARGON2.parallelism),
    ...extraEnv,
  }));
  try {
    const token = (await readFile(join(service.dataDir, "admin.pat"), "utf8")).trim();
    return { port: service.port, pid: service.pid, headers: { host: `localhost:${service.port}`, authorization: `Bearer ${token}` }, stop: service.stop };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

/**
 * Another process on an already bootstrapped database (startService bootstraps it and reads
 * the token it writes), without metrics; `env`: further PLATFORM_* settings.
 */
export async function startPeer(databaseUrl: string, env: Record<string, string>): Promise<{ port: number; pid: number | undefined; stop(): Promise<void> }> {
  return launch(databaseUrl, () => ({ PLATFORM_METRICS_BIND: "", ...env }));
}

/** One API call to the service at `port` (as the bootstrapped instance's administrator), failing unless it answers `status`. */
export async function callApi(
  port: number,
  headers: ServiceUnderTest["headers"],
  method: string,
  path: string,
  body: unknown,
  status: number,
): Promise<unknown> {
  const res = await requestJson(port, method, path, { headers: { ...headers, host: `localhost:${port}` }, body });
  if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * What the scenarios named in `only` read (every scenario's when it is empty), seeded: targets
 * always, users for GetUser, organizations and providers for SearchIDPs and ResolveLanguages,
 * so that a run of one scenario (or its profile) is not mostly seeding.
 */
export async function seedScenarios(service: ServiceUnderTest, only: readonly string[]): Promise<ScenarioContext> {
  const wants = (...names: string[]) => only.length === 0 || names.some((n) => only.includes(n));
  const ids = await seedTargets(service, SEED_TARGETS);
  const userIds = wants("GetUser") ? await seedUsers(service, SEED_USERS) : [];
  const { orgId } = wants("SearchIDPs", "ResolveLanguages")
    ? await seedReusable(service, { orgs: SEED_ORGS, idps: SEED_IDPS, policies: SEED_IDP_POLICIES })
    : { orgId: "" };
  const schemaId = wants("CreateSchemaUser")
    ? ((
        (await callApi(
          service.port,
          service.headers,
          "POST",
          "/resources/v3alpha/user_schemas",
          { type: "bench-employee", schema: EMPLOYEE_SCHEMA, possibleAuthenticators: ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_PASSWORD"] },
          201,
        )) as Created
      ).details.id as string)
    : "";
  return { ids, userIds, orgId, schemaId, headers: service.headers };
}

/** Creates `count` targets over REST, eight at a time; returns their ids. */
export function seedTargets(service: ServiceUnderTest, count: number): Promise<string[]> {
  return inBatches(
    count,
    201,
    "seeding a target",
    (n) =>
      requestJson(service.port, "POST", "/resources/v3alpha/targets", {
        headers: service.headers,
        body: { name: `seed-${n}`, restWebhook: { url: `https://example.com/hook/${n}` }, timeout: "10s" },
      }),
    (b) => (b as Created).details.id,
  );
}

/**
 * Creates `count` human users with a password over REST, eight at a time; returns their ids.
 * Their addresses are verified: an unverified one queues a verification email, and rendering
 * and sending 200 of them would run in the service during the first measured rows.
 */
export function seedUsers(service: ServiceUnderTest, count: number): Promise<string[]> {
  return inBatches(
    count,
    201,
    "seeding a user",
    (n) => {
      const username = `seed-user-${n}`;
      return requestJson(service.port, "POST", "/resources/v3alpha/users", {
        headers: service.headers,
        body: {
          username,
          human: {
            profile: { givenName: "Seed", familyName: `User ${n}` },
            email: { address: `${username}@example.com`, isVerified: true },
            password: USER_PASSWORD,
          },
        },
      });
    },
    (b) => (b as Created).details.id,
  );
}

/** Runs `count` calls eight at a time, failing on the first answer without `status`. */
async function inBatches<T>(count: number, status: number, what: string, call: (n: number) => Promise<JsonResponse>, pick: (body: unknown) => T): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += 8) {
    for (const res of await Promise.all(Array.from({ length: Math.min(8, count - start) }, (_, i) => call(start + i)))) {
      if (res.status !== status) throw new Error(`${what} failed: ${res.status} ${JSON.stringify(res.body)}`);
      out.push(pick(res.body));
    }
  }
  return out;
}

export interface ReusableSeed {
  /** The organization SearchIDPs and ResolveLanguages ask in. */
  orgId: string;
}

/**
 * Organizations with identity providers and language settings: half of `idps` GitLab
 * providers in the instance, the rest spread over the organizations; the first organization
 * switches `policies` of the instance's off for itself, sets its own default language, and
 * the instance sets a default and a restriction. Everything through the REST API.
 */
export async function seedReusable(service: ServiceUnderTest, opts: { orgs: number; idps: number; policies: number }): Promise<ReusableSeed> {
  const call = (method: string, path: string, body?: unknown) => requestJson(service.port, method, path, { headers: service.headers, body });
  const orgIds = await inBatches(
    opts.orgs,
    201,
    "creating an organization",
    (n) => call("POST", "/resources/v3alpha/organizations", { name: `bench-org-${n}` }),
    (b) => (b as Created).details.id,
  );
  const orgId = orgIds[0]!;
  const gitlab = (n: number) => ({
    idp: { name: `GitLab ${String(n).padStart(4, "0")}` },
    config: { clientId: `client-${n}`, clientSecret: `secret-${n}`, scopes: ["openid", "profile"] },
  });
  const instanceIdps = Math.ceil(opts.idps / 2);
  const inInstance = await inBatches(
    instanceIdps,
    201,
    "creating an instance provider",
    (n) => call("POST", "/resources/v3alpha/idps/gitlab", gitlab(n)),
    (b) => (b as Created).details.id,
  );
  await inBatches(
    opts.idps - instanceIdps,
    201,
    "creating an organization's provider",
    (n) => call("POST", `/resources/v3alpha/idps/gitlab?ctx.orgId=${orgIds[n % orgIds.length]}`, gitlab(instanceIdps + n)),
    () => undefined,
  );
  await inBatches(
    opts.policies,
    200,
    "switching a provider off in the organization",
    (n) => call("PATCH", `/resources/v3alpha/idps/gitlab/${inInstance[n]}?ctx.orgId=${orgId}`, { idp: { statePolicy: "STATE_POLICY_DEACTIVATE" } }),
    () => undefined,
  );
  const languages = [
    ["", { defaultLanguage: { key: "de" }, restrictedLanguages: { languages: [{ key: "en" }, { key: "de" }] } }],
    [`?ctx.orgId=${orgId}`, { defaultLanguage: { key: "en" } }],
  ] as const;
  for (const [ctx, settings] of languages) {
    const res = await call("PATCH", `/settings/v3alpha/languages${ctx}`, settings);
    if (res.status !== 200) throw new Error(`setting languages failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return { orgId };
}
