import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/** What a database restart does to the service's idle connections, on PostgreSQL only. */
describe.skipIf(!process.env.TEST_DATABASE_URL)("idle connections killed by the database (postgres)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("postgres");
  });
  afterAll(() => server?.close());

  it("keeps the service up and serving once the pool has replaced them", async () => {
    const client = protocolClient(PlatformActions, "rest", server.baseUrl);
    const search = () => client.call("SearchTargets", {}, server.adminToken);
    expect(await search()).toMatchObject({ ok: true });

    const url = (server.config.database as { url: string }).url;
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    const { rows } = await admin.query("select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1", [
      new URL(url).pathname.slice(1),
    ]);
    await admin.end();
    expect(rows[0].n).toBeGreaterThan(0);

    // A query may still pick a dead connection before the pool notices; the next one must work.
    await new Promise((resolve) => setTimeout(resolve, 200));
    let result = await search();
    if (!result.ok) result = await search();
    expect(result).toMatchObject({ ok: true });
  });
});
