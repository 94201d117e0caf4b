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
 * same answers over Connect and REST; the second-factor settings (force_mfa, the allowed
 * factors, passkeys as multi-factors, the two lifetimes) alike, their validation as curl users
 * send JSON.
 */

const LOGIN = PlatformLoginSettings;
const RESET_ALL = Object.fromEntries(
  [
    "allowRegister",
    "allowUsernamePassword",
    "allowExternalIdp",
    "maxPasswordAttempts",
    "forceMfa",
    "forceMfaLocalOnly",
    "secondFactors",
    "multiFactors",
    "mfaInitSkipLifetime",
    "secondFactorCheckLifetime",
  ].map((p) => [p, { reset: true }]),
);
const TOTP = "SECOND_FACTOR_TYPE_TOTP";
const U2F = "SECOND_FACTOR_TYPE_U2F";
const PASSKEY = "MULTI_FACTOR_TYPE_PASSKEY";
const OTP_EMAIL = "SECOND_FACTOR_TYPE_OTP_EMAIL";
const OTP_SMS = "SECOND_FACTOR_TYPE_OTP_SMS";
const HOUR_S = 3600;

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

/** The resolved second-factor settings, likewise (an empty list dropped too); durations as proto3 JSON writes them ("64800s"). */
function resolvedMfa(m: Msg) {
  const s = m.settings ?? {};
  const one = (v: Msg, zero: boolean | string | string[]) => ({ value: v?.value ?? zero, ...(v?.owner && { owner: v.owner }) });
  return {
    forceMfa: one(s.forceMfa, false),
    forceMfaLocalOnly: one(s.forceMfaLocalOnly, false),
    secondFactors: one(s.secondFactors, []),
    multiFactors: one(s.multiFactors, []),
    mfaInitSkipLifetime: one(s.mfaInitSkipLifetime, "0s"),
    secondFactorCheckLifetime: one(s.secondFactorCheckLifetime, "0s"),
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
      set: (settings: JsonObject, ctx: JsonObject | undefined, token = server.adminToken) =>
        c.call("SetLoginSettings", { settings, ...(ctx && { ctx }) }, token),
      resolve: (ctx: JsonObject | undefined, token = server.adminToken) => c.call("ResolveLoginSettings", { ...(ctx && { ctx }) }, token),
    };
  };
  const SYSTEM = { system: true };
  const inst = () => ({ instanceId: server.instanceId });
  const resolve = async (ctx: JsonObject | undefined, protocol: Protocol = "grpc") =>
    resolvedLogin(ok(await client(protocol).resolve(ctx), `resolve ${JSON.stringify(ctx)}`));

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
      return {
        allowRegister: { value: false, ...owner },
        allowUsernamePassword: { value: true, ...owner },
        allowExternalIdp: { value: true, ...owner },
        maxPasswordAttempts: { value: 7, ...owner },
      };
    };
    expect(await resolve({ orgId: orgA })).toEqual(builtIn(true));
    expect(await resolve(undefined)).toEqual(builtIn(true));
    expect(await resolve(SYSTEM)).toEqual(builtIn(false));
    expect(details(ok(await client().resolve({ orgId: orgA })))).toEqual({ sequence: 0, changeDate: undefined, owner: orgOwner(orgA) });
    // What the login pages read, with the process's configured kind.
    expect(await loginSettingsOf(server.service.store.db, server.instanceId, orgA)).toMatchObject({
      allowRegister: false,
      allowUsernamePassword: true,
      allowExternalIdp: true,
    });
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
    expect(await resolve({ orgId: orgA })).toMatchObject({
      allowExternalIdp: { value: true, owner: SYSTEM_OWNER },
      maxPasswordAttempts: { value: 3, owner: I },
    });
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
    const patched = await fetch(`${server.baseUrl}/settings/v3alpha/login`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ maxPasswordAttempts: { set: 4 } }),
    });
    expect(patched.status).toBe(200);
    expect((await resolve(undefined)).maxPasswordAttempts).toEqual({ value: 4 });
  });

  const resolveMfa = async (ctx: JsonObject | undefined) => resolvedMfa(ok(await client().resolve(ctx), `resolve ${JSON.stringify(ctx)}`));
  /** PATCH /settings/v3alpha/login as curl sends it: the settings as the body, ctx in the query. */
  const patch = (settings: JsonObject, query: string) =>
    fetch(`${server.baseUrl}/settings/v3alpha/login?${query}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(settings),
    });

  it("resolves the second-factor defaults: not forced, every factor and passkeys as multi-factors allowed, skip for 720h, a check counts 18h", async () => {
    const builtIn = (owned: boolean) => {
      const owner = owned ? { owner: SYSTEM_OWNER } : {};
      return {
        forceMfa: { value: false, ...owner },
        forceMfaLocalOnly: { value: false, ...owner },
        secondFactors: { value: [TOTP, U2F, OTP_EMAIL, OTP_SMS], ...owner },
        multiFactors: { value: [PASSKEY], ...owner },
        mfaInitSkipLifetime: { value: `${720 * HOUR_S}s`, ...owner },
        secondFactorCheckLifetime: { value: `${18 * HOUR_S}s`, ...owner },
      };
    };
    expect(await resolveMfa({ orgId: orgA })).toEqual(builtIn(true));
    expect(await resolveMfa(inst())).toEqual(builtIn(true));
    expect(await resolveMfa(SYSTEM)).toEqual(builtIn(false));
    expect(await loginSettingsOf(server.service.store.db, server.instanceId, orgA)).toMatchObject({
      forceMfa: false,
      forceMfaLocalOnly: false,
      secondFactors: ["totp", "u2f", "otp_email", "otp_sms"],
      multiFactors: ["passkey"],
      mfaInitSkipLifetimeMs: 720 * HOUR_S * 1000,
      secondFactorCheckLifetimeMs: 18 * HOUR_S * 1000,
    });
  });

  it("sets the second-factor settings in the instance, inherited by organizations with the owner, overridden and reset per organization", async () => {
    const I = instanceOwner(server.instanceId);
    ok(await client().set({ forceMfa: { set: true }, secondFactors: { set: { types: [OTP_SMS, U2F, TOTP] } }, mfaInitSkipLifetime: { set: "0s" } }, inst()));
    // An empty list is a value of its own (no factor allowed), as 0s is (no skipping).
    ok(
      await client("rest").set(
        {
          forceMfaLocalOnly: { set: true },
          secondFactors: { set: { types: [] } },
          multiFactors: { set: { types: [] } },
          secondFactorCheckLifetime: { set: "3600s" },
        },
        { orgId: orgA },
      ),
    );

    expect(await resolveMfa(inst())).toEqual({
      forceMfa: { value: true },
      forceMfaLocalOnly: { value: false, owner: SYSTEM_OWNER },
      secondFactors: { value: [OTP_SMS, U2F, TOTP] },
      multiFactors: { value: [PASSKEY], owner: SYSTEM_OWNER },
      mfaInitSkipLifetime: { value: "0s" },
      secondFactorCheckLifetime: { value: `${18 * HOUR_S}s`, owner: SYSTEM_OWNER },
    });
    expect(await resolveMfa({ orgId: orgA })).toEqual({
      forceMfa: { value: true, owner: I },
      forceMfaLocalOnly: { value: true },
      secondFactors: { value: [] },
      multiFactors: { value: [] },
      mfaInitSkipLifetime: { value: "0s", owner: I },
      secondFactorCheckLifetime: { value: "3600s" },
    });
    expect(await resolveMfa({ orgId: orgB })).toMatchObject({
      forceMfa: { value: true, owner: I },
      secondFactors: { value: [OTP_SMS, U2F, TOTP], owner: I },
      multiFactors: { value: [PASSKEY], owner: SYSTEM_OWNER },
    });
    expect(await loginSettingsOf(server.service.store.db, server.instanceId, orgA)).toMatchObject({
      forceMfa: true,
      forceMfaLocalOnly: true,
      secondFactors: [],
      multiFactors: [],
      mfaInitSkipLifetimeMs: 0,
      secondFactorCheckLifetimeMs: 3600_000,
    });

    ok(await client().set({ secondFactors: { reset: true }, multiFactors: { reset: true }, secondFactorCheckLifetime: { reset: true } }, { orgId: orgA }));
    expect(await resolveMfa({ orgId: orgA })).toMatchObject({
      forceMfaLocalOnly: { value: true },
      secondFactors: { value: [OTP_SMS, U2F, TOTP], owner: I },
      multiFactors: { value: [PASSKEY], owner: SYSTEM_OWNER },
      secondFactorCheckLifetime: { value: `${18 * HOUR_S}s`, owner: SYSTEM_OWNER },
    });
    ok(await client().set({ forceMfa: { reset: true }, secondFactors: { reset: true }, mfaInitSkipLifetime: { reset: true } }, inst()));
    expect(await resolveMfa({ orgId: orgB })).toMatchObject({
      forceMfa: { value: false, owner: SYSTEM_OWNER },
      secondFactors: { value: [TOTP, U2F, OTP_EMAIL, OTP_SMS], owner: SYSTEM_OWNER },
      mfaInitSkipLifetime: { value: `${720 * HOUR_S}s`, owner: SYSTEM_OWNER },
    });
  });

  it("refuses lifetimes that are not whole seconds from 0 to 8760h and factor lists with UNSPECIFIED, unknown or repeated types (REST JSON)", async () => {
    const query = `ctx.orgId=${orgA}`;
    const refusals: [string, JsonObject][] = [
      ["a fraction of a second", { mfaInitSkipLifetime: { set: "3600.5s" } }],
      ["a nanosecond", { secondFactorCheckLifetime: { set: "3600.000000001s" } }],
      ["a negative duration", { mfaInitSkipLifetime: { set: "-1s" } }],
      ["above 8760h", { secondFactorCheckLifetime: { set: `${8760 * HOUR_S + 1}s` } }],
      ["not a duration", { mfaInitSkipLifetime: { set: "1h" } }],
      ["UNSPECIFIED", { secondFactors: { set: { types: ["SECOND_FACTOR_TYPE_UNSPECIFIED"] } } }],
      ["an unknown name", { secondFactors: { set: { types: ["SECOND_FACTOR_TYPE_PASSKEY"] } } }],
      ["an undefined number", { secondFactors: { set: { types: [5] } } }],
      ["a repeated type", { secondFactors: { set: { types: [TOTP, OTP_SMS, TOTP] } } }],
      ["an empty change", { secondFactors: {} }],
      ["an UNSPECIFIED multi-factor", { multiFactors: { set: { types: ["MULTI_FACTOR_TYPE_UNSPECIFIED"] } } }],
      ["a second factor as a multi-factor", { multiFactors: { set: { types: [U2F] } } }],
      ["an undefined multi-factor number", { multiFactors: { set: { types: [2] } } }],
      ["a repeated multi-factor", { multiFactors: { set: { types: [PASSKEY, PASSKEY] } } }],
      ["an empty multi-factor change", { multiFactors: {} }],
    ];
    for (const [label, settings] of refusals) {
      const res = await patch(settings, query);
      expect(res.status, label).toBe(400);
      expect(((await res.json()) as Msg).code, label).toBe(Code.InvalidArgument);
    }
    failed(await client().set({ secondFactors: { set: { types: [OTP_EMAIL, OTP_EMAIL] } } }, { orgId: orgA }), Code.InvalidArgument);
    expect(failed(await client().set({ mfaInitSkipLifetime: { set: "-3600s" } }, { orgId: orgA }), Code.InvalidArgument)).toContain("mfa_init_skip_lifetime");
    expect(await resolveMfa({ orgId: orgA })).toMatchObject({
      secondFactors: { owner: SYSTEM_OWNER },
      multiFactors: { owner: SYSTEM_OWNER },
      mfaInitSkipLifetime: { owner: SYSTEM_OWNER },
      secondFactorCheckLifetime: { owner: SYSTEM_OWNER },
    });

    // The bounds themselves are fine.
    const res = await patch(
      {
        mfaInitSkipLifetime: { set: `${8760 * HOUR_S}s` },
        secondFactorCheckLifetime: { set: "0s" },
        secondFactors: { set: { types: [OTP_EMAIL, U2F] } },
        multiFactors: { set: { types: [PASSKEY] } },
      },
      query,
    );
    expect(res.status).toBe(200);
    expect(await resolveMfa({ orgId: orgA })).toMatchObject({
      mfaInitSkipLifetime: { value: `${8760 * HOUR_S}s` },
      secondFactorCheckLifetime: { value: "0s" },
      secondFactors: { value: [OTP_EMAIL, U2F] },
      multiFactors: { value: [PASSKEY] },
    });
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
