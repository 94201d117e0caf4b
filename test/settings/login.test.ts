import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { loginSettingsOf } from "../../src/domain/settings/login.js";
import { protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { SYSTEM_OWNER, createOrg, createUserIn, details, failed, instanceOwner, ok, orgOwner, type Msg } from "./helpers.js";

/**
 * PlatformLoginSettings: the built-in defaults (registration off, passwords and external
 * identity providers on, the lockout threshold from PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS),
 * resolution org → instance → system with owners, resets, validation, permissions, and the
 * same answers over Connect and REST.
 */

const LOGIN = PlatformLoginSettings;
const RESET_ALL = { allowRegister: { reset: true }, allowUsernamePassword: { reset: true }, allowExternalIdp: { reset: true }, maxPasswordAttempts: { reset: true } };

/** The resolved settings with proto3 JSON's dropped defaults (false, 0, no owner) made explicit. */
function resolvedLogin(m: Msg) {
  const s = m.settings ?? {};
  const one = (v: Msg, zero: boolean | number) => ({ value: v?.value ?? zero, ...(v?.owner && { owner: v.owner }) });
  return {
    allowRegister: one(s.allowRegister, false),
    allowUsernamePassword: one(s.allowUsernamePassword, false),
    allowExternalIdp: one(s.allowExternalIdp, false),
    maxPasswordAttempts: one(s.maxPasswordAttempts, 0),
  };
}

describe.each(DATABASE_KINDS)("PlatformLoginSettings (%s)", (kind) => {
  let server: TestServer;
  let orgA: string;
  let orgB: string;
  let counter = 0;
  const client = (protocol: Protocol = "grpc") => {
    const c = protocolClient(LOGIN, protocol, server.baseUrl);
    return {
      set: (settings: JsonObject, ctx: JsonObject | undefined, token = server.adminToken) => c.call("SetLoginSettings", { settings, ...(ctx && { ctx }) }, token),
      resolve: (ctx: JsonObject | undefined, token = server.adminToken) => c.call("ResolveLoginSettings", { ...(ctx && { ctx }) }, token),
    };
  };
  const SYSTEM = { system: true };
  const inst = () => ({ instanceId: server.instanceId });
  const resolve = async (ctx: JsonObject | undefined, protocol: Protocol = "grpc") => resolvedLogin(ok(await client(protocol).resolve(ctx), `resolve ${JSON.stringify(ctx)}`));

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS: "7" });
    orgA = await createOrg(server, `Login A ${++counter}`);
    orgB = await createOrg(server, `Login B ${counter}`);
  });
  afterAll(() => server?.close());
  afterEach(async () => {
    for (const ctx of [{ orgId: orgA }, { orgId: orgB }, inst(), SYSTEM]) ok(await client().set(RESET_ALL, ctx), `reset ${JSON.stringify(ctx)}`);
  });

  it("resolves the built-in defaults, the threshold from the environment, owned by the system", async () => {
    const builtIn = (owned: boolean) => {
      const owner = owned ? { owner: SYSTEM_OWNER } : {};
      return { allowRegister: { value: false, ...owner }, allowUsernamePassword: { value: true, ...owner }, allowExternalIdp: { value: true, ...owner }, maxPasswordAttempts: { value: 7, ...owner } };
    };
    expect(await resolve({ orgId: orgA })).toEqual(builtIn(true));
    expect(await resolve(undefined)).toEqual(builtIn(true));
    expect(await resolve(SYSTEM)).toEqual(builtIn(false));
    expect(details(ok(await client().resolve({ orgId: orgA })))).toEqual({ sequence: 0, changeDate: undefined, owner: orgOwner(orgA) });
    // What the login pages read, with the process's configured kind.
    expect(await loginSettingsOf(server.service.store.db, server.instanceId, orgA)).toMatchObject({ allowRegister: false, allowUsernamePassword: true, allowExternalIdp: true });
  });

  it("inherits system → instance → organization per property, and resets fall back to the parent", async () => {
    const I = instanceOwner(server.instanceId);
    ok(await client().set({ maxPasswordAttempts: { set: 5 } }, SYSTEM));
    const set = ok(await client().set({ allowRegister: { set: true }, maxPasswordAttempts: { set: 3 } }, inst()));
    expect(details(set)).toEqual({ sequence: 1, changeDate: expect.any(String), owner: I });
    const setA = ok(await client().set({ maxPasswordAttempts: { set: 2 }, allowExternalIdp: { set: false } }, { orgId: orgA }));
    expect(details(setA)).toEqual({ sequence: 1, changeDate: expect.any(String), owner: orgOwner(orgA) });

    expect(await resolve({ orgId: orgA })).toEqual({
      allowRegister: { value: true, owner: I },
      allowUsernamePassword: { value: true, owner: SYSTEM_OWNER },
      allowExternalIdp: { value: false },
      maxPasswordAttempts: { value: 2 },
    });
    expect(await resolve({ orgId: orgB })).toEqual({
      allowRegister: { value: true, owner: I },
      allowUsernamePassword: { value: true, owner: SYSTEM_OWNER },
      allowExternalIdp: { value: true, owner: SYSTEM_OWNER },
      maxPasswordAttempts: { value: 3, owner: I },
    });
    expect(await resolve(inst())).toMatchObject({ allowRegister: { value: true }, maxPasswordAttempts: { value: 3 } });
    expect(await resolve(SYSTEM)).toMatchObject({ maxPasswordAttempts: { value: 5 } });

    // 0 is a value of its own (no lockout), not a reset.
    ok(await client().set({ maxPasswordAttempts: { set: 0 } }, { orgId: orgB }));
    expect((await resolve({ orgId: orgB })).maxPasswordAttempts).toEqual({ value: 0 });
    expect(await loginSettingsOf(server.service.store.db, server.instanceId, orgB)).toMatchObject({ allowRegister: true, maxPasswordAttempts: 0 });

    const reset = ok(await client().set({ maxPasswordAttempts: { reset: true }, allowExternalIdp: { reset: true } }, { orgId: orgA }));
    expect(details(reset)).toMatchObject({ sequence: 2, owner: orgOwner(orgA) });
    expect(await resolve({ orgId: orgA })).toMatchObject({ allowExternalIdp: { value: true, owner: SYSTEM_OWNER }, maxPasswordAttempts: { value: 3, owner: I } });
    ok(await client().set({ maxPasswordAttempts: { reset: true } }, inst()));
    expect((await resolve({ orgId: orgA })).maxPasswordAttempts).toEqual({ value: 5, owner: SYSTEM_OWNER });
    // Writing what is already set changes nothing.
    const same = ok(await client().set({ allowRegister: { set: true } }, inst()));
    expect(details(same).sequence).toBe(details(ok(await client().resolve(inst()))).sequence);
  });

  it("refuses thresholds above 1000, an empty change of a property and a reset other than true", async () => {
    const tooMany = failed(await client().set({ maxPasswordAttempts: { set: 1001 } }, { orgId: orgA }), Code.InvalidArgument);
    expect(tooMany).toContain("max_password_attempts");
    ok(await client().set({ maxPasswordAttempts: { set: 1000 } }, { orgId: orgA }));
    failed(await client().set({ allowRegister: {} }, { orgId: orgA }), Code.InvalidArgument);
    failed(await client().set({ allowRegister: { reset: false } }, { orgId: orgA }), Code.InvalidArgument);
    failed(await client("connect").set({ maxPasswordAttempts: { set: -1 } }, { orgId: orgA }), Code.InvalidArgument);
    const rest = await client("rest").set({ maxPasswordAttempts: { set: 5000 } }, { orgId: orgA });
    expect(rest).toMatchObject({ ok: false, code: Code.InvalidArgument, httpStatus: 400 });
    expect((await resolve({ orgId: orgA })).maxPasswordAttempts).toEqual({ value: 1000 });
  });

  it("answers alike over gRPC, Connect and REST (PATCH and GET /settings/v3alpha/login)", async () => {
    for (const protocol of ["connect", "rest", "grpc-web"] as const) {
      const c = client(protocol);
      const set = await c.set({ allowRegister: { set: true } }, { orgId: orgB });
      expect(set, protocol).toMatchObject({ ok: true, ...(protocol === "rest" && { httpStatus: 200 }) });
      expect((await resolve({ orgId: orgB }, protocol)).allowRegister, protocol).toEqual({ value: true });
      ok(await c.set({ allowRegister: { reset: true } }, { orgId: orgB }));
    }
    const res = await fetch(`${server.baseUrl}/settings/v3alpha/login?ctx.orgId=${orgB}`, { headers: { authorization: `Bearer ${server.adminToken}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Msg;
    expect(body.settings.allowUsernamePassword).toEqual({ value: true, owner: SYSTEM_OWNER });
    const patched = await fetch(`${server.baseUrl}/settings/v3alpha/login`, { method: "PATCH", headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" }, body: JSON.stringify({ maxPasswordAttempts: { set: 4 } }) });
    expect(patched.status).toBe(200);
    expect((await resolve(undefined)).maxPasswordAttempts).toEqual({ value: 4 });
  });

  it("lets settings.write holders set and context members resolve, as language settings; gated by multitenancy_settings", async () => {
    const orgOwnerA = (await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }] })).token;
    const iamViewer = (await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] })).token;
    const userOfA = (await createUserIn(server, orgA)).token;
    const plainUser = (await server.createUser({})).token;
    for (const protocol of ["grpc", "rest"] as const) {
      const c = client(protocol);
      ok(await c.set({ allowRegister: { set: true } }, { orgId: orgA }, orgOwnerA), protocol);
      expect(failed(await c.set({ allowRegister: { set: true } }, { orgId: orgB }, orgOwnerA), Code.PermissionDenied, protocol)).toContain("settings.write");
      failed(await c.set({ allowRegister: { set: true } }, undefined, orgOwnerA), Code.PermissionDenied, protocol);
      failed(await c.set({ allowRegister: { set: true } }, undefined, iamViewer), Code.PermissionDenied, protocol);
      ok(await c.resolve(undefined, iamViewer), protocol);
      ok(await c.resolve({ orgId: orgA }, userOfA), protocol);
      failed(await c.resolve({ orgId: orgB }, userOfA), Code.PermissionDenied, protocol);
      failed(await c.resolve(SYSTEM, iamViewer), Code.PermissionDenied, protocol);
      ok(await c.resolve(undefined, plainUser), protocol);
      failed(await protocolClient(LOGIN, protocol, server.baseUrl).call("ResolveLoginSettings", {}, undefined), Code.Unauthenticated, protocol);
    }
    await setInstanceFlag(server, server.instanceId, "multitenancy_settings", false);
    try {
      expect(failed(await client().resolve(undefined, plainUser), Code.FailedPrecondition)).toContain("multitenancy_settings");
    } finally {
      await setInstanceFlag(server, server.instanceId, "multitenancy_settings", undefined);
    }
  });
});
