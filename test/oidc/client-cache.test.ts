import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_BASIC, appClient, createProject, projectClient } from "../apps/helpers.js";
import { spawnPeer } from "../support/child-service.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { machineUser, ok, uniqueName, Users } from "../users/helpers.js";

/** Far below the caches' time to live (60 s, src/oidc/helpers/lookups.ts): only the access epoch explains a change seen this soon. */
const WITHIN_MS = 2_000;
const FORM = "application/x-www-form-urlencoded";
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const projectScope = (id: string) => `urn:platform:iam:org:project:id:${id}:aud`;

/**
 * Applications and machine users are cached as OAuth clients per process (lookups.ts), and
 * projects as audiences; every write that changes them advances the access epoch. The
 * endpoints are called on the process that made the change (PGlite and PostgreSQL) and,
 * on PostgreSQL, on a second process whose caches were just warmed: a regenerated secret,
 * a deactivated application or project, a renamed machine user must count at once there too.
 */
describe.each(DATABASE_KINDS)("cached OAuth clients follow changes at once (%s)", (kind) => {
  let server: TestServer;
  let peer: Awaited<ReturnType<typeof spawnPeer>> | undefined;
  let users: Users;
  /** Where the OAuth calls go: the second process when there is one, else the same. */
  const origins = () => [server.baseUrl, ...(peer ? [peer.baseUrl] : [])];

  beforeAll(async () => {
    server = await startTestServer(kind);
    users = new Users(server);
    if (kind === "postgres") {
      peer = await spawnPeer(server.config.database as { url: string }, { LOG_LEVEL: "info" });
      // Until it listens, the peer bypasses its caches and nothing here would be proven.
      for (let waited = 0; !peer.output().includes("listening for access changes"); waited += 50) {
        if (waited > 10_000) throw new Error(`the peer never listened for access changes:\n${peer.output()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });
  afterAll(async () => {
    await peer?.cleanup();
    await server?.close();
  });

  const post = async (origin: string, path: string, authorization: string, fields: Record<string, string>) => {
    const res = await fetch(`${origin}${path}`, { method: "POST", headers: { authorization, "content-type": FORM }, body: new URLSearchParams(fields) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const token = (origin: string, id: string, secret: string, scope = "openid") =>
    post(origin, "/oauth/v2/token", basic(id, secret), { grant_type: "client_credentials", scope });
  const introspect = (origin: string, id: string, secret: string, value: string) => post(origin, "/oauth/v2/introspect", basic(id, secret), { token: value });

  /** The call's status on every process: at once on the writer's, within WITHIN_MS on the peer's. */
  async function follows(call: (origin: string) => Promise<{ status: number }>, want: number, label: string): Promise<void> {
    const [own, other] = origins();
    expect((await call(own!)).status, `${label} (same process)`).toBe(want);
    if (!other) return;
    const started = Date.now();
    let status: number;
    while ((status = (await call(other)).status) !== want && Date.now() - started < WITHIN_MS) await new Promise((r) => setTimeout(r, 25));
    expect(status, `${label} (other process, after ${Date.now() - started} ms)`).toBe(want);
  }

  /** Every process answers the call with 200 once (so each holds the client in its cache). */
  async function warm(call: (origin: string) => Promise<{ status: number; body: unknown }>): Promise<void> {
    for (const origin of origins()) {
      const res = await call(origin);
      expect(res.status, `${origin}: ${JSON.stringify(res.body)}`).toBe(200);
    }
  }

  it("a machine user's regenerated or removed secret, and a new username, count at once", async () => {
    const username = uniqueName("svc-cache");
    const id = await users.create(machineUser(username));
    const first = ok(await users.call("GenerateSecret", { id })).clientSecret as string;
    await warm((o) => token(o, username, first));

    const second = ok(await users.call("GenerateSecret", { id })).clientSecret as string;
    await follows((o) => token(o, username, first), 401, "the replaced secret");
    await follows((o) => token(o, username, second), 200, "the new secret");

    const renamed = uniqueName("svc-renamed");
    ok(await users.call("PatchUser", { id, user: { username: renamed } }));
    await follows((o) => token(o, username, second), 401, "the old username");
    await follows((o) => token(o, renamed, second), 200, "the new username");

    ok(await users.call("RemoveSecret", { id }));
    await follows((o) => token(o, renamed, second), 401, "the removed secret");
  });

  it("an application's regenerated secret, its deactivation and its project's deactivation count at once", async () => {
    const projectId = await createProject(server.baseUrl, server.adminToken, uniqueName("cache-project"));
    const apps = appClient(server.baseUrl, server.adminToken);
    const api = await apps.ok("CreateApp", { projectId, app: { name: "api", api: { authMethodType: API_BASIC } } });
    const username = uniqueName("svc-aud");
    const id = await users.create(machineUser(username));
    const secret = ok(await users.call("GenerateSecret", { id })).clientSecret as string;
    const issued = await token(server.baseUrl, username, secret, `openid ${projectScope(projectId)}`);
    expect(issued.body.scope).toContain(projectScope(projectId));
    const value = issued.body.access_token as string;
    await warm((o) => introspect(o, api.clientId, api.clientSecret, value));

    const renewed = (await apps.ok("RegenerateAppSecret", { id: api.details.id })).clientSecret as string;
    await follows((o) => introspect(o, api.clientId, api.clientSecret, value), 401, "the replaced application secret");
    await follows((o) => introspect(o, api.clientId, renewed, value), 200, "the new application secret");

    await apps.ok("DeactivateApp", { id: api.details.id });
    await follows((o) => introspect(o, api.clientId, renewed, value), 401, "a deactivated application");
    await apps.ok("ReactivateApp", { id: api.details.id });
    await follows((o) => introspect(o, api.clientId, renewed, value), 200, "a reactivated application");

    // The project's state decides both its applications and whether it may be asked for as an audience.
    await warm((o) => token(o, username, secret, `openid ${projectScope(projectId)}`));
    await projectClient(server.baseUrl, server.adminToken).ok("DeactivateProject", { id: projectId });
    await follows((o) => introspect(o, api.clientId, renewed, value), 401, "an application of a deactivated project");
    for (const origin of origins()) {
      const res = await token(origin, username, secret, `openid ${projectScope(projectId)}`);
      expect(res.status).toBe(200);
      expect(res.body.scope, `${origin}: a deactivated project is no audience`).toBe("openid");
    }
  });
});
