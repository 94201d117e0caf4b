import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { h1 } from "./raw-http.js";
import { startTestServer, type TestServer } from "../support/server.js";

/** PLATFORM_BOOTSTRAP_PAT_EXPIRES: the first admin token is no master key for ever. */
describe("the bootstrap admin token", () => {
  let server: TestServer;
  let started: number;
  beforeAll(async () => {
    started = Date.now();
    server = await startTestServer("pglite", { PLATFORM_BOOTSTRAP_PAT_EXPIRES: "2s" });
  });
  afterAll(() => server?.close());

  it("works until PLATFORM_BOOTSTRAP_PAT_EXPIRES has passed, then answers 401 invalid_token", async () => {
    const search = () =>
      h1(`${server.baseUrl}/resources/v3alpha/targets/_search`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
        body: "[]",
      });
    expect((await search()).status).toBe(200);
    const expires = await server.service.store.db.selectFrom("personal_access_tokens").select("expires_at").executeTakeFirstOrThrow();
    expect(expires.expires_at.getTime()).toBeGreaterThanOrEqual(started + 2_000);
    expect(expires.expires_at.getTime()).toBeLessThan(Date.now() + 2_000);

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expires.expires_at.getTime() - Date.now() + 50)));
    const after = await search();
    expect(after.status).toBe(401);
    expect(after.headers["www-authenticate"]).toMatch(/invalid_token/);
  });

  it("defaults to a year", async () => {
    const { loadConfig } = await import("../../src/config/config.js");
    expect(loadConfig({}).bootstrapPatExpiresMs).toBe(8760 * 3_600_000);
    expect(() => loadConfig({ PLATFORM_BOOTSTRAP_PAT_EXPIRES: "forever" })).toThrow(/PLATFORM_BOOTSTRAP_PAT_EXPIRES/);
    expect(loadConfig({ PLATFORM_BOOTSTRAP_PAT_EXPIRES: "1h30m" }).bootstrapPatExpiresMs).toBe(5_400_000);
  });
});
