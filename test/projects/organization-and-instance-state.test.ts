import { Code } from "@connectrpc/connect";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PlatformProjects } from "../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { protocolClient, PROTOCOLS, type CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, orgClient } from "./helpers.js";

const outcome = (r: CallResult) => (r.ok ? "ok" : Code[r.code]);

describe.each(DATABASE_KINDS)("projects of a deactivated organization (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  it.each(PROTOCOLS)("CreateProject in a deactivated organization is FailedPrecondition over %s; after reactivation it works", async (protocol) => {
    const orgs = orgClient(server.baseUrl, server.adminToken);
    const orgId = await createOrg(server.baseUrl, server.adminToken, `Deactivated ${protocol}`);
    await orgs.ok("DeactivateOrganization", { id: orgId });
    const projects = protocolClient(PlatformProjects, protocol, server.baseUrl);
    const refused = await projects.call("CreateProject", { project: { name: "Not Here" }, ctx: { orgId } }, server.adminToken);
    expect(refused).toMatchObject({ ok: false, code: Code.FailedPrecondition, message: expect.stringContaining("deactivated") });
    if (protocol === "rest") expect(refused.httpStatus).toBe(400);
    await orgs.ok("ReactivateOrganization", { id: orgId });
    expect(outcome(await projects.call("CreateProject", { project: { name: "Here" }, ctx: { orgId } }, server.adminToken))).toBe("ok");
  });
});

const POSTGRES = process.env.TEST_DATABASE_URL;

/** Every table that holds an instance's rows (domain/instance/commands.ts INSTANCE_TABLES, events aside). */
const INSTANCE_TABLES = [
  "action_deliveries",
  "executions",
  "targets",
  "user_grants",
  "signing_keys",
  "oidc_payloads",
  "app_keys",
  "apps",
  "project_roles",
  "projects",
  "settings",
  "idp_state_policies",
  "external_identities",
  "idps",
  "user_keys",
  "user_metadata",
  "user_secrets",
  "personal_access_tokens",
  "memberships",
  "users",
  "org_domains",
  "orgs",
  "instance_domains",
  "instances",
];

/**
 * DeleteInstance and a write in that instance at the same time: the write either commits
 * first (and the deletion takes its rows too) or finds the instance gone. Writes hold the
 * instance (a shared advisory lock) from their start; the deletion takes it exclusively. Only
 * PostgreSQL runs two transactions at once (PGlite has one connection).
 */
describe.skipIf(!POSTGRES)("DeleteInstance racing a write in that instance (postgres only; skipped without TEST_DATABASE_URL)", () => {
  let server: TestServer;
  let admin: pg.Client;
  beforeAll(async () => {
    server = await startTestServer("postgres");
    admin = new pg.Client({ connectionString: (server.config.database as { url: string }).url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await server?.close();
  });

  const rowsLeft = async (instanceId: string) => {
    const left: Record<string, number> = {};
    for (const table of INSTANCE_TABLES) {
      const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from ${table} where instance_id = $1`, [instanceId]);
      if (rows[0]!.n > 0) left[table] = rows[0]!.n;
    }
    return left;
  };
  /** Waits until `count` sessions of the database wait for a lock. */
  const lockWaiters = (count: number) =>
    expect
      .poll(
        async () =>
          (await admin.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'"))
            .rows[0]!.n,
        { timeout: 10_000 },
      )
      .toBe(count);

  /**
   * Locks the instance's organization row in a session of its own (pg_stat_activity stays as
   * it was for the rest of a transaction that read it); the result lets it go.
   */
  const lockOrganization = async (instance: { instanceId: string; orgId: string }) => {
    const locker = new pg.Client({ connectionString: (server.config.database as { url: string }).url });
    await locker.connect();
    await locker.query("begin");
    await locker.query("select 1 from orgs where instance_id = $1 and id = $2 for update", [instance.instanceId, instance.orgId]);
    return async () => {
      await locker.query("rollback");
      await locker.end();
    };
  };

  it("a CreateProject under way when DeleteInstance starts: the deletion waits for it and leaves no rows", async () => {
    const other = await server.createInstance("127.0.0.1");
    // Holds the write after its start: the organization it creates in is locked.
    const unlock = await lockOrganization(other);
    const write = protocolClient(PlatformProjects, "connect", other.baseUrl).call("CreateProject", { project: { name: "Racing" } }, other.adminToken);
    await lockWaiters(1);
    const removal = protocolClient(PlatformInstances, "connect", server.baseUrl).call("DeleteInstance", { id: other.instanceId }, server.adminToken);
    await lockWaiters(2);
    await unlock();
    expect(outcome(await write)).toBe("ok");
    expect(outcome(await removal)).toBe("ok");
    expect(await rowsLeft(other.instanceId)).toEqual({});
  });

  it("a CreateProject starting while DeleteInstance is under way: it waits for the deletion and finds the instance gone", async () => {
    // The domain the test before freed; the server listens on this address only.
    const other = await server.createInstance("127.0.0.1");
    // Holds the deletion after its start: it deletes the organization, which is locked.
    const unlock = await lockOrganization(other);
    const removal = protocolClient(PlatformInstances, "connect", server.baseUrl).call("DeleteInstance", { id: other.instanceId }, server.adminToken);
    await lockWaiters(1);
    const write = protocolClient(PlatformProjects, "connect", other.baseUrl).call("CreateProject", { project: { name: "Too late" } }, other.adminToken);
    await lockWaiters(2);
    await unlock();
    expect(outcome(await removal)).toBe("ok");
    const late = await write;
    expect(outcome(late)).toBe("NotFound");
    expect(late.ok ? "" : late.message).toMatch(/instance .* not found/);
    expect(await rowsLeft(other.instanceId)).toEqual({});
  });
});
