import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type Config } from "../../src/config/config.js";
import type { Actor } from "../../src/domain/details.js";
import { addInstance } from "../../src/domain/instance/commands.js";
import { BOOTSTRAP_PRINCIPAL } from "../../src/domain/authz/principal.js";
import { addMembership } from "../../src/domain/membership/commands.js";
import { addPersonalAccessToken } from "../../src/domain/pat/commands.js";
import { addMachineUser } from "../../src/domain/user/commands.js";
import { createLogger } from "../../src/log/logger.js";
import { startService, type Service } from "../../src/server/start.js";
import type { DatabaseTarget } from "../../src/store/database.js";
import type { Tx } from "../../src/store/db.js";
import { createTestDatabase } from "./database.js";

export interface TestServer {
  service: Service;
  config: Config;
  /** http://localhost:<port>: the bootstrapped first instance. */
  baseUrl: string;
  adminToken: string;
  instanceId: string;
  defaultOrgId: string;
  close(): Promise<void>;
  /** A machine user with the given memberships and a fresh token, in the given instance. */
  createUser(opts: {
    instanceId?: string;
    roles?: { context: "system" | "instance" | "org" | "project_grant"; contextId?: string; roles: string[] }[];
    expiresAt?: Date;
    /** The user's organization; the instance's default organization when absent. */
    orgId?: string;
  }): Promise<{ userId: string; token: string }>;
  /** Another instance, reachable at http://<domain>:<port>. */
  createInstance(domain: string): Promise<{ instanceId: string; orgId: string; adminToken: string; baseUrl: string }>;
}

/**
 * Argon2id at its least cost: the suites hash and check thousands of passwords, and at the
 * defaults (19 MiB, two passes) that was a tenth of the run's CPU. What is tested (which
 * hash is made, when one is made again) does not depend on the cost; the defaults
 * themselves are tested in test/unit.
 */
export const CHEAP_PASSWORD_HASHES = { PLATFORM_PASSWORD_ARGON2_MEMORY_KIB: "1024", PLATFORM_PASSWORD_ARGON2_ITERATIONS: "1" };

/** The real service on a free port of 127.0.0.1, with its own empty database. */
export async function startTestServer(
  kind: DatabaseTarget["kind"],
  env: Record<string, string> = {},
  /** Lets a test put something (a faulty proxy) between the service and PostgreSQL. */
  opts: {
    databaseUrl?: (url: URL) => URL;
    /** Collects the service's warnings and errors (JSON lines), which are silent otherwise. */
    warnings?: string[];
  } = {},
): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "platform-test-"));
  const database = await createTestDatabase(kind);
  const target =
    database.target.kind === "postgres" && opts.databaseUrl
      ? { kind: "postgres" as const, url: opts.databaseUrl(new URL(database.target.url)).toString() }
      : database.target;
  const config: Config = {
    ...loadConfig({
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_PORT: "0",
      PLATFORM_BIND: "127.0.0.1",
      PLATFORM_EXTERNAL_URL: "http://localhost",
      LOG_LEVEL: "silent",
      PLATFORM_METRICS_BIND: "",
      PLATFORM_DB_POOL_MAX: "10",
      PLATFORM_MASTERKEY: "0123456789abcdef0123456789abcdef",
      ...CHEAP_PASSWORD_HASHES,
      ...env,
    }),
    database: target,
  };
  const warnings = opts.warnings;
  const logger = warnings ? createLogger("warn", { write: (line: string) => void warnings.push(line) }) : createLogger("silent");
  const service = await startService(config, logger);
  // Until it listens for access changes a process bypasses its caches: tests that count
  // lookups or follow notifications would see a process whose caches are not yet in play.
  for (const started = Date.now(); !service.access.reliable;) {
    if (Date.now() - started > 20_000) throw new Error("the test server never listened for access changes");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const adminToken = (await readFile(config.adminPatPath, "utf8")).trim();
  const instance = await service.store.db.selectFrom("instances").select(["id", "default_org_id"]).executeTakeFirstOrThrow();
  const baseUrl = `http://localhost:${service.port}`;
  const write = <T>(fn: (tx: Tx) => Promise<T>) => service.store.db.transaction().execute(fn);

  const server: TestServer = {
    service,
    config,
    baseUrl,
    adminToken,
    instanceId: instance.id,
    defaultOrgId: instance.default_org_id,
    async close() {
      // The service in place now: a test may have restarted it on the same database.
      await server.service.close();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
    async createUser({ instanceId = instance.id, roles = [], expiresAt = new Date(Date.now() + 3600_000), orgId }) {
      return write(async (tx) => {
        const actor: Actor = { instanceId, userId: "test" };
        const org = await tx.selectFrom("instances").select("default_org_id").where("id", "=", instanceId).executeTakeFirstOrThrow();
        const user = await addMachineUser(tx, actor, {
          orgId: orgId ?? org.default_org_id,
          username: `user-${Math.random().toString(36).slice(2)}`,
          name: "test",
        });
        for (const r of roles) {
          await addMembership(
            tx,
            actor,
            { userId: user.id, contextType: r.context, contextId: r.contextId ?? instanceId, roles: r.roles },
            BOOTSTRAP_PRINCIPAL,
          );
        }
        // Expired tokens are made valid first and expired afterwards: the command refuses past dates.
        const pat = await addPersonalAccessToken(tx, actor, {
          userId: user.id,
          expiresAt: expiresAt.getTime() > Date.now() ? expiresAt : new Date(Date.now() + 60_000),
        });
        if (expiresAt.getTime() <= Date.now()) {
          await tx.updateTable("personal_access_tokens").set({ expires_at: expiresAt }).where("id", "=", pat.id).execute();
        }
        return { userId: user.id, token: pat.token };
      });
    },
    async createInstance(domain) {
      const { instanceId, orgId } = await write((tx) => addInstance(tx, { name: domain, domains: [domain], defaultOrgName: "Default" }, { userId: "test" }));
      const admin = await server.createUser({ instanceId, roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
      return { instanceId, orgId, adminToken: admin.token, baseUrl: `http://${domain}:${service.port}` };
    },
  };
  return server;
}
