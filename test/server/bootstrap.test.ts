import { mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig, type Config } from "../../src/config/config.js";
import { instanceByDomain } from "../../src/domain/instance/queries.js";
import { createLogger } from "../../src/log/logger.js";
import { startService, type Service } from "../../src/server/start.js";
import { DATABASE_KINDS, createTestDatabase, type TestDatabase } from "../support/database.js";

// Every test starts a service on a fresh database (PGlite: about 10 s on an idle two-core
// machine, migrations and bootstrap); beside the suite's other files it has taken over 30 s.
vi.setConfig({ testTimeout: 120_000 });

const KEY = "0123456789abcdef0123456789abcdef";

/**
 * `npm start` as main.ts runs it, minus the process: the configuration from the
 * environment, then startService. PGlite is the default, file-backed in the data dir.
 */
describe.each(DATABASE_KINDS)("bootstrap of the first instance (%s)", (kind) => {
  let dataDir: string;
  const databases: TestDatabase[] = [];
  let database: TestDatabase | undefined;
  let running: Service | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "platform-bootstrap-"));
    if (kind === "postgres") database = await freshPostgres();
  });
  afterAll(async () => {
    await running?.close();
    for (const db of databases) await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function freshPostgres(): Promise<TestDatabase> {
    // Unmigrated: a first start migrates, as on a user's new database.
    const db = await createTestDatabase("postgres", { unmigrated: true });
    databases.push(db);
    return db;
  }

  function config(): Config {
    const env = { PLATFORM_DATA_DIR: dataDir, PLATFORM_PORT: "0", PLATFORM_BIND: "127.0.0.1", LOG_LEVEL: "silent", PLATFORM_METRICS_BIND: "" };
    if (kind === "pglite") return loadConfig(env);
    const target = database!.target;
    return { ...loadConfig({ ...env, DATABASE_URL: (target as { url: string }).url, PLATFORM_MASTERKEY: KEY }), database: target };
  }

  async function start(): Promise<Service> {
    running = await startService(config(), createLogger("silent"));
    return running;
  }
  async function stop(): Promise<void> {
    const service = running;
    running = undefined;
    await service?.close();
  }

  /** REST GetTarget of an id that does not exist: 404 when the token is accepted, 401 when not. */
  async function getUnknownTarget(service: Service, token: string): Promise<number> {
    const res = await fetch(`http://localhost:${service.port}/resources/v3alpha/targets/does-not-exist`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await res.arrayBuffer();
    return res.status;
  }

  const patPath = () => join(dataDir, "admin.pat");
  const countInstances = async (service: Service) =>
    Number(
      (
        await service.store.db
          .selectFrom("instances")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  let firstPat: Buffer;
  let firstKey: Buffer | undefined;

  it("first start: writes admin.pat (mode 0600) whose token works", async () => {
    const service = await start();
    if (kind === "pglite") expect((await stat(join(dataDir, "pgdata"))).isDirectory()).toBe(true);
    firstPat = await readFile(patPath());
    expect((await stat(patPath())).mode & 0o777).toBe(0o600);
    const token = firstPat.toString("utf8").trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(await getUnknownTarget(service, token)).toBe(404);
    expect(await getUnknownTarget(service, "not-a-token")).toBe(401);

    // The instance is named by the host of PLATFORM_EXTERNAL_URL (default http://localhost:<port>).
    const instance = await instanceByDomain(service.store.db, "localhost");
    expect(instance).toBeDefined();
    expect(await countInstances(service)).toBe(1);
    const admin = await service.store.db.selectFrom("users").select(["id", "type"]).where("username", "=", "platform-admin").executeTakeFirst();
    expect(admin?.type).toBe("machine");
    const roles = await service.store.db.selectFrom("memberships").select(["context_type", "roles"]).where("user_id", "=", admin!.id).execute();
    expect(roles.map((r) => [r.context_type, r.roles]).sort()).toEqual([
      ["instance", ["IAM_OWNER"]],
      ["system", ["SYSTEM_OWNER"]],
    ]);
    await stop();
  });

  it.runIf(kind === "pglite")("first start with PGlite and no PLATFORM_MASTERKEY: generates data/masterkey (mode 0600)", async () => {
    const path = join(dataDir, "masterkey");
    firstKey = await readFile(path);
    expect(firstKey.toString("utf8").trim()).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("restart: no second bootstrap, admin.pat byte-identical, the token still works", async () => {
    const service = await start();
    expect(await readFile(patPath())).toEqual(firstPat);
    if (firstKey) expect(await readFile(join(dataDir, "masterkey"))).toEqual(firstKey);
    expect(await getUnknownTarget(service, firstPat.toString("utf8").trim())).toBe(404);
    expect(await countInstances(service)).toBe(1);
    await stop();
  });

  it("refuses to start on an empty database while admin.pat exists, naming the file and leaving it alone", async () => {
    if (kind === "pglite") await rm(join(dataDir, "pgdata"), { recursive: true, force: true });
    else database = await freshPostgres();
    await expect(start()).rejects.toThrow(patPath());
    running = undefined;
    expect(await readFile(patPath())).toEqual(firstPat);
  });

  it("after the old admin.pat is moved away, bootstraps that database once, with a new token", async () => {
    await rename(patPath(), `${patPath()}.old`);
    const service = await start();
    const pat = await readFile(patPath());
    expect(pat).not.toEqual(firstPat);
    expect(await getUnknownTarget(service, pat.toString("utf8").trim())).toBe(404);
    expect(await getUnknownTarget(service, firstPat.toString("utf8").trim())).toBe(401);
    expect(await countInstances(service)).toBe(1);
    await stop();
  });

  it("never overwrites admin.pat on a restart, even after it was edited", async () => {
    await writeFile(patPath(), "edited by the operator\n", { mode: 0o600 });
    const service = await start();
    expect(await readFile(patPath(), "utf8")).toBe("edited by the operator\n");
    expect(await countInstances(service)).toBe(1);
    await stop();
  });
});

describe("a bootstrap that cannot write the token file", () => {
  it("rolls back, so that the next start bootstraps and hands out a working token", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "platform-bootstrap-fail-"));
    try {
      // A file where the token's directory should be: mkdir fails inside the transaction.
      await writeFile(join(dataDir, "blocker"), "not a directory");
      const env = { PLATFORM_DATA_DIR: dataDir, PLATFORM_PORT: "0", PLATFORM_BIND: "127.0.0.1", LOG_LEVEL: "silent", PLATFORM_METRICS_BIND: "" };
      const blocked = loadConfig({ ...env, PLATFORM_ADMIN_PAT_PATH: join(dataDir, "blocker", "admin.pat") });
      await expect(startService(blocked, createLogger("silent"))).rejects.toThrow();

      const service = await startService(loadConfig(env), createLogger("silent"));
      try {
        const instances = await service.store.db.selectFrom("instances").select("id").execute();
        expect(instances).toHaveLength(1);
        const token = (await readFile(join(dataDir, "admin.pat"), "utf8")).trim();
        const res = await fetch(`http://localhost:${service.port}/resources/v3alpha/targets/nope`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(res.status).toBe(404);
      } finally {
        await service.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
