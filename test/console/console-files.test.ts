import { Code } from "@connectrpc/connect";
import { createHash, randomBytes } from "node:crypto";
import { request } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionMissingConsoleApps } from "../../src/domain/instance/console-app.js";
import { CONSOLE_CSP } from "../../src/server/console-files.js";
import { appClient, projectClient, orgClient } from "../apps/helpers.js";
import type { CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/*
 * The console as the service serves it (src/server/console-files.ts) and the application it
 * signs in with (src/domain/instance/console-app.ts): its files under a strict CSP, hashed
 * assets cached for a year and the page never; config.json naming each instance's own
 * client at the issuer of the host asked; that client's redirect URIs on every domain of its
 * instance and no other; and the service alone managing it.
 */

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request to the test server with any Host (another instance's domain), over HTTP/1.1. */
function get(
  port: number,
  path: string,
  { host = `localhost:${port}`, method = "GET", headers = {} }: { host?: string; method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers: { host, ...headers }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

const pkce = () => {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
};

describe.each(DATABASE_KINDS)("the console's files and application (%s)", (kind) => {
  let server: TestServer;
  let port: number;
  let consoleClientId: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    port = server.service.port;
    const config = await get(port, "/ui/console/config.json");
    consoleClientId = (JSON.parse(config.body) as { clientId: string }).clientId;
  });
  afterAll(() => server?.close());

  it("serves the page under the console's CSP, never cached, for every path of the console", async () => {
    const moved = await get(port, "/ui/console");
    expect([moved.status, moved.headers.location]).toEqual([308, "/ui/console/"]);
    for (const path of ["/ui/console/", "/ui/console/organizations/123", "/ui/console/callback?code=x&state=y"]) {
      const page = await get(port, path);
      expect(page.status, path).toBe(200);
      expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(page.headers["content-security-policy"]).toBe(CONSOLE_CSP);
      expect(page.headers["cache-control"]).toBe("no-cache");
      expect(page.headers["x-frame-options"]).toBe("DENY");
      // The build, not the sources: scripts under assets/, none inline.
      expect(page.body).toMatch(/<script type="module" crossorigin src="\/ui\/console\/assets\/[\w-]+\.js"><\/script>/);
      expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(page.body).not.toContain("/src/main.tsx");
    }
    const posted = await get(port, "/ui/console/", { method: "POST" });
    expect([posted.status, posted.headers.allow]).toEqual([405, "GET, HEAD"]);
  });

  it("keeps hashed assets for a year, answers 304 to their ETag and 404 to unknown names", async () => {
    const page = await get(port, "/ui/console/");
    const script = /src="(\/ui\/console\/assets\/[^"]+\.js)"/.exec(page.body)![1]!;
    const asset = await get(port, script);
    expect(asset.status).toBe(200);
    // The first page's budget (issue 36): 250 KB of JavaScript gzipped, a production build.
    expect(gzipSync(asset.body).length / 1024).toBeLessThan(250);
    expect(asset.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(asset.headers["cache-control"]).toMatch(/max-age=31536000.*immutable/);
    expect(asset.headers["content-security-policy"]).toBe(CONSOLE_CSP);
    const again = await get(port, script, { headers: { "if-none-match": String(asset.headers.etag) } });
    expect(again.status).toBe(304);
    const missing = await get(port, "/ui/console/assets/nothing-here.js");
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ code: Code.NotFound, message: "no console file at /ui/console/assets/nothing-here.js" });
  });

  it("names each instance's own console client at the issuer of the host asked; its redirect URIs are on that host only", async () => {
    const domain = `console-${randomBytes(4).toString("hex")}.localhost`;
    await server.createInstance(domain);
    const own = JSON.parse((await get(port, "/ui/console/config.json")).body) as { issuer: string; clientId: string };
    const other = await get(port, "/ui/console/config.json", { host: `${domain}:${port}` });
    expect(other.status).toBe(200);
    expect(other.headers["cache-control"]).toBe("no-store");
    const theirs = JSON.parse(other.body) as { issuer: string; clientId: string };
    expect(own.issuer).toBe(`http://localhost:${port}`);
    expect(theirs.issuer).toBe(`http://${domain}:${port}`);
    expect(theirs.clientId).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(theirs.clientId).not.toBe(own.clientId);

    const authorize = (host: string, clientId: string, redirectHost: string) => {
      const { challenge } = pkce();
      const query = new URLSearchParams({
        client_id: clientId,
        redirect_uri: `http://${redirectHost}/ui/console/callback`,
        response_type: "code",
        scope: "openid urn:platform:iam:org:project:id:platform:aud",
        state: "s",
        code_challenge: challenge,
        code_challenge_method: "S256",
      });
      return get(port, `/oauth/v2/authorize?${query}`, { host });
    };
    // To the login pages: the redirect URI is the console's on the host the request came to.
    const there = await authorize(`${domain}:${port}`, theirs.clientId, `${domain}:${port}`);
    expect(there.status, there.body).toBe(303);
    expect(there.headers.location).toMatch(/\/ui\/login\//);
    // Another host's callback is no redirect URI of this client; another instance's client is unknown here.
    const elsewhere = await authorize(`${domain}:${port}`, theirs.clientId, `localhost:${port}`);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toContain("redirect_uri");
    const foreign = await authorize(`${domain}:${port}`, own.clientId, `${domain}:${port}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body).toContain("client");
  });

  it("lets nobody change, deactivate or remove the console's application, its project or its organization", async () => {
    const apps = appClient(server.baseUrl, server.adminToken);
    const { appId, projectId } = await findConsoleApp();
    const refused = async (call: Promise<CallResult>, what: string) => {
      const r = await call;
      expect(r.ok, what).toBe(false);
      if (!r.ok) {
        expect(r.code, what).toBe(Code.FailedPrecondition);
        expect(r.message, what).toContain("console");
      }
    };
    await refused(apps.call("PatchApp", { id: appId, app: { name: "Renamed" } }), "patch");
    await refused(apps.call("DeactivateApp", { id: appId }), "deactivate");
    await refused(apps.call("DeleteApp", { id: appId }), "delete");
    const projects = projectClient(server.baseUrl, server.adminToken);
    await refused(projects.call("DeactivateProject", { id: projectId }), "deactivate project");
    await refused(projects.call("DeleteProject", { id: projectId }), "delete project");
    // Made the default elsewhere, the organization holding it still stays.
    const orgs = orgClient(server.baseUrl, server.adminToken);
    const otherOrg = await orgs.ok("CreateOrganization", { organization: { name: `other-${randomBytes(3).toString("hex")}` } });
    await orgs.ok("SetAsInstanceDefault", { id: otherOrg.details.id });
    try {
      await refused(orgs.call("DeleteOrganization", { id: server.defaultOrgId }), "delete org");
      await refused(orgs.call("DeactivateOrganization", { id: server.defaultOrgId }), "deactivate org");
    } finally {
      await orgs.ok("SetAsInstanceDefault", { id: server.defaultOrgId });
    }
    // Still there and signing in.
    expect((await apps.ok("GetApp", { id: appId })).app.state).toBe("APP_STATE_ACTIVE");
  });

  it("gives an instance created before the console its application at start-up, once", async () => {
    const domain = `older-${randomBytes(4).toString("hex")}.localhost`;
    const { instanceId, orgId } = await server.createInstance(domain);
    const db = server.service.store.db;
    // As an instance of an earlier version stands: no console client recorded.
    await db.updateTable("instances").set({ console_client_id: null }).where("instance_id", "=", instanceId).where("id", "=", instanceId).execute();
    expect((await get(port, "/ui/console/config.json", { host: `${domain}:${port}` })).status).toBe(503);
    expect(await db.transaction().execute((tx) => provisionMissingConsoleApps(tx, "system"))).toBe(1);
    expect(await db.transaction().execute((tx) => provisionMissingConsoleApps(tx, "system"))).toBe(0);
    const config = JSON.parse((await get(port, "/ui/console/config.json", { host: `${domain}:${port}` })).body) as { clientId: string };
    const app = await db
      .selectFrom("apps")
      .innerJoin("projects", (j) => j.onRef("projects.instance_id", "=", "apps.instance_id").onRef("projects.id", "=", "apps.project_id"))
      .select(["apps.name", "projects.name as project", "apps.org_id"])
      .where("apps.instance_id", "=", instanceId)
      .where("apps.client_id", "=", config.clientId)
      .executeTakeFirstOrThrow();
    // The name its first console project took is taken: the next one is numbered.
    expect(app).toEqual({ name: "Console", project: "Platform 2", org_id: orgId });
  });

  async function findConsoleApp() {
    const row = await server.service.store.db
      .selectFrom("apps")
      .select(["id", "project_id"])
      .where("client_id", "=", consoleClientId)
      .executeTakeFirstOrThrow();
    return { appId: row.id, projectId: row.project_id };
  }
});
