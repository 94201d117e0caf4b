import { createPublicKey, createSign, createVerify, generateKeyPairSync } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { API_PKJWT, BASIC, NONE, PKJWT, appClient, createOrg, oidc, orgOwner, projectClient, type Client } from "./helpers.js";

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

/** Keys of applications that authenticate with private_key_jwt (RFC 7523 client assertions). */
describe.each(DATABASE_KINDS)("application keys (%s)", (kind) => {
  let server: TestServer;
  let apps: Client;
  let orgId: string;
  let projectId: string;
  beforeAll(async () => {
    server = await startTestServer(kind);
    apps = appClient(server.baseUrl, server.adminToken);
    orgId = await createOrg(server.baseUrl, server.adminToken, "Keys Org");
    projectId = (await projectClient(server.baseUrl, server.adminToken).ok("CreateProject", { project: { name: "Keys" }, ctx: { orgId } })).details.id;
  });
  afterAll(() => server?.close());

  const createApp = async (name: string, config: Record<string, unknown>) =>
    (await apps.ok("CreateApp", { projectId, app: { name, ...config } })).details.id as string;
  const keyRows = (appId: string) => server.service.store.db.selectFrom("app_keys").select(["id", "key_type"]).where("app_id", "=", appId).execute();

  it("generates EC and RSA pairs whose key file signs what the listed public key verifies", async () => {
    const appId = await createApp("pkjwt web", { oidc: oidc({ authMethodType: PKJWT }) });
    const app = (await apps.ok("GetApp", { id: appId })).app;
    expect(app.hasSecret ?? false).toBe(false);
    for (const [generate, alg] of [
      ["KEY_TYPE_EC", "SHA256"],
      ["KEY_TYPE_RSA", "SHA256"],
    ] as const) {
      const expirationDate = inDays(30);
      const added = await apps.ok("AddAppKey", { appId, key: { generate, expirationDate } });
      expect(added.details).toEqual({ id: expect.any(String), sequence: "1", changeDate: expect.any(String), resourceOwner: orgOwner(orgId) });
      const file = JSON.parse(added.keyFile);
      expect(file).toEqual({
        type: "application",
        keyId: added.details.id,
        key: expect.stringContaining("-----BEGIN PRIVATE KEY-----"),
        appId,
        clientId: app.clientId,
      });
      const listed = (await apps.ok("SearchAppKeys", { appId })).result.find((k: { details: { id: string } }) => k.details.id === added.details.id);
      expect(listed).toEqual({ details: added.details, expirationDate, publicKey: expect.stringContaining("-----BEGIN PUBLIC KEY-----"), type: generate });
      const signature = createSign(alg).update("assertion").sign(file.key);
      expect(createVerify(alg).update("assertion").verify(createPublicKey(listed.publicKey), signature)).toBe(true);
    }
    // The private keys were never stored or recorded.
    const payloads = (await server.service.store.db.selectFrom("events").select("payload").where("aggregate_type", "=", "app_key").execute()).map((r) =>
      JSON.stringify(r.payload),
    );
    expect(payloads.length).toBe(2);
    expect(payloads.join("\n")).not.toContain("PRIVATE KEY");
  });

  it("registers a given public key of an API application, returning no key file", async () => {
    const appId = await createApp("pkjwt api", { api: { authMethodType: API_PKJWT } });
    const publicKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ type: "spki", format: "pem" }).toString();
    const added = await apps.ok("AddAppKey", { appId, key: { publicKey, expirationDate: inDays(1) } });
    expect(added.keyFile ?? "").toBe("");
    expect((await apps.ok("SearchAppKeys", { appId })).result.map((k: { publicKey: string; type: string }) => [k.publicKey, k.type])).toEqual([
      [publicKey, "KEY_TYPE_RSA"],
    ]);
  });

  it("refuses keys to applications that authenticate otherwise, bad keys and past expirations, storing nothing", async () => {
    for (const [name, config] of [
      ["basic", { oidc: oidc({ authMethodType: BASIC }) }],
      ["none", { oidc: oidc({ authMethodType: NONE }) }],
      ["api basic", { api: {} }],
    ] as const) {
      const appId = await createApp(`refused ${name}`, config);
      const refused = await apps.call("AddAppKey", { appId, key: { generate: "KEY_TYPE_EC", expirationDate: inDays(1) } });
      expect(refused, name).toMatchObject({ ok: false, code: Code.FailedPrecondition, message: expect.stringContaining("PRIVATE_KEY_JWT") });
      expect(await keyRows(appId)).toEqual([]);
    }
    const appId = await createApp("pkjwt refusals", { oidc: oidc({ authMethodType: PKJWT }) });
    const weak = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ type: "spki", format: "pem" }).toString();
    expect(await apps.call("AddAppKey", { appId, key: { publicKey: weak, expirationDate: inDays(1) } })).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
    });
    expect(await apps.call("AddAppKey", { appId, key: { generate: "KEY_TYPE_EC", expirationDate: inDays(-1) } })).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
    });
    expect(await apps.call("AddAppKey", { appId, key: { generate: "KEY_TYPE_EC" } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await apps.call("AddAppKey", { appId: "no-such-app", key: { generate: "KEY_TYPE_EC", expirationDate: inDays(1) } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    expect(await keyRows(appId)).toEqual([]);
  });

  it("deletes a key once; deleting the application or its project takes its keys along", async () => {
    const appId = await createApp("pkjwt delete", { oidc: oidc({ authMethodType: PKJWT }) });
    const key = (await apps.ok("AddAppKey", { appId, key: { generate: "KEY_TYPE_EC", expirationDate: inDays(1) } })).details.id;
    const deleted = await apps.ok("DeleteAppKey", { appId, keyId: key });
    expect(deleted.details).toMatchObject({ id: key, sequence: "2", resourceOwner: orgOwner(orgId) });
    expect(await apps.call("DeleteAppKey", { appId, keyId: key })).toMatchObject({ ok: false, code: Code.NotFound });
    expect((await apps.ok("SearchAppKeys", { appId })).result ?? []).toEqual([]);

    await apps.ok("AddAppKey", { appId, key: { generate: "KEY_TYPE_EC", expirationDate: inDays(1) } });
    await apps.ok("DeleteApp", { id: appId });
    expect(await keyRows(appId)).toEqual([]);
    expect(await apps.call("SearchAppKeys", { appId })).toMatchObject({ ok: false, code: Code.NotFound });

    const projects = projectClient(server.baseUrl, server.adminToken);
    const other = (await projects.ok("CreateProject", { project: { name: "Keys doomed" }, ctx: { orgId } })).details.id;
    const doomed = (await apps.ok("CreateApp", { projectId: other, app: { name: "doomed", api: { authMethodType: API_PKJWT } } })).details.id;
    await apps.ok("AddAppKey", { appId: doomed, key: { generate: "KEY_TYPE_RSA", expirationDate: inDays(1) } });
    await projects.ok("DeleteProject", { id: other });
    expect(await keyRows(doomed)).toEqual([]);
  });

  it("needs project.app.write to add and delete, project.app.read to list, in the application's organization", async () => {
    const appId = await createApp("pkjwt access", { oidc: oidc({ authMethodType: PKJWT }) });
    const key = (await apps.ok("AddAppKey", { appId, key: { generate: "KEY_TYPE_EC", expirationDate: inDays(1) } })).details.id;
    const owner = await server.createUser({ roles: [{ context: "org", contextId: orgId, roles: ["ORG_OWNER"] }] });
    const viewer = await server.createUser({ roles: [{ context: "org", contextId: orgId, roles: ["ORG_OWNER_VIEWER"] }] });
    const stranger = await server.createUser({ roles: [{ context: "org", contextId: server.defaultOrgId, roles: ["ORG_OWNER"] }] });
    const add = { appId, key: { generate: "KEY_TYPE_EC", expirationDate: inDays(1) } };
    expect(await apps.call("AddAppKey", add, owner.token)).toMatchObject({ ok: true });
    expect(await apps.call("AddAppKey", add, viewer.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(await apps.call("SearchAppKeys", { appId }, viewer.token)).toMatchObject({ ok: true });
    expect(await apps.call("DeleteAppKey", { appId, keyId: key }, viewer.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
    for (const [method, request] of [
      ["AddAppKey", add],
      ["SearchAppKeys", { appId }],
      ["DeleteAppKey", { appId, keyId: key }],
    ] as const) {
      expect(await apps.call(method, request, stranger.token), method).toMatchObject({ ok: false, code: Code.PermissionDenied });
    }
    expect(await apps.call("DeleteAppKey", { appId, keyId: key }, owner.token)).toMatchObject({ ok: true });
  });
});
