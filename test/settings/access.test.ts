import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformMessageTextSettings } from "../../gen/platform/settings/message_text/v3alpha/message_text_service_pb.js";
import { PlatformBrandingSettings } from "../../gen/platform/settings/branding/v3alpha/branding_service_pb.js";
import { protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { FEATURES, LANGUAGES, createOrg, createUserIn, failed, ok } from "./helpers.js";

/**
 * Who may set and resolve language, message text, feature and branding settings (and upload
 * and remove branding images) in which context, and the flag gating of
 * PlatformLanguageSettings (PlatformFeatureSettings is never gated).
 */

type Caller = "admin" | "systemOwner" | "iamOwner" | "iamViewer" | "orgOwnerA" | "orgViewerA" | "plainUser" | "userOfA";
type Ctx = "system" | "instance" | "orgA" | "orgB" | "defaultOrg";
type Outcome = "ok" | Code;
const CALLERS: Caller[] = ["admin", "systemOwner", "iamOwner", "iamViewer", "orgOwnerA", "orgViewerA", "plainUser", "userOfA"];
const CTXS: Ctx[] = ["system", "instance", "orgA", "orgB", "defaultOrg"];
const PD = Code.PermissionDenied;

/** Expected outcome per caller, per context in CTXS order. */
type Table = Record<Caller, [Outcome, Outcome, Outcome, Outcome, Outcome]>;

const ALL: [Outcome, Outcome, Outcome, Outcome, Outcome] = ["ok", "ok", "ok", "ok", "ok"];
const NONE: [Outcome, Outcome, Outcome, Outcome, Outcome] = [PD, PD, PD, PD, PD];
const INSTANCE_WIDE: [Outcome, Outcome, Outcome, Outcome, Outcome] = [PD, "ok", "ok", "ok", "ok"];

// settings.write: IAM_OWNER in its instance and its orgs, ORG_OWNER in its org, system members everywhere.
const SETTINGS_WRITE: Table = {
  admin: ALL,
  systemOwner: ALL,
  iamOwner: INSTANCE_WIDE,
  iamViewer: NONE,
  orgOwnerA: [PD, PD, "ok", PD, PD],
  orgViewerA: NONE,
  plainUser: NONE,
  userOfA: NONE,
};
// Any membership in the context (or an enclosing one), or being a user of that context:
// every user of the instance belongs to the instance; a user of an organization to it.
const CONTEXT_MEMBER: Table = {
  admin: ALL,
  systemOwner: ALL,
  iamOwner: INSTANCE_WIDE,
  iamViewer: INSTANCE_WIDE,
  orgOwnerA: [PD, "ok", "ok", PD, "ok"],
  orgViewerA: [PD, "ok", "ok", PD, "ok"],
  plainUser: [PD, "ok", PD, PD, "ok"],
  userOfA: [PD, "ok", "ok", PD, PD],
};

const EXPECTED: Record<string, Table> = {
  SetLanguages: SETTINGS_WRITE,
  ResolveLanguages: CONTEXT_MEMBER,
  SetMessageText: SETTINGS_WRITE,
  ResolveMessageText: CONTEXT_MEMBER,
  SetBrandingSettings: SETTINGS_WRITE,
  ResolveBrandingSettings: CONTEXT_MEMBER,
  SetBrandingImage: SETTINGS_WRITE,
  RemoveBrandingImage: SETTINGS_WRITE,
  PreviewBrandingSettings: SETTINGS_WRITE,
  // feature.write: IAM_OWNER in its instance (and its orgs), system members everywhere; no org role.
  SetFeatures: {
    admin: ALL,
    systemOwner: ALL,
    iamOwner: INSTANCE_WIDE,
    iamViewer: NONE,
    orgOwnerA: NONE,
    orgViewerA: NONE,
    plainUser: NONE,
    userOfA: NONE,
  },
  ResolveFeatures: {
    admin: ALL,
    systemOwner: ALL,
    iamOwner: INSTANCE_WIDE,
    iamViewer: INSTANCE_WIDE,
    orgOwnerA: NONE,
    orgViewerA: NONE,
    plainUser: NONE,
    userOfA: NONE,
  },
};

/** Harmless requests: writes of what is already in effect (valid in every context). */
const REQUESTS: Record<string, JsonObject> = {
  SetLanguages: { settings: { defaultLanguage: { key: "en" } } },
  ResolveLanguages: {},
  SetMessageText: { kind: "invite", language: "en", settings: { subject: { reset: true } } },
  ResolveMessageText: { kind: "invite", language: "en" },
  SetFeatures: { settings: { tokenExchange: { set: false } } },
  ResolveFeatures: {},
  SetBrandingSettings: { settings: { font: { set: "BRANDING_FONT_SYSTEM_UI" } } },
  ResolveBrandingSettings: {},
  // The same small PNG each time: after the first, a write that changes nothing.
  SetBrandingImage: {
    image: "icon_dark",
    content: { contentType: "image/png", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" },
  },
  RemoveBrandingImage: { image: "logo_dark" },
  PreviewBrandingSettings: { settings: { primaryColor: { set: "#0b7285" } } },
};
const TEXTS = PlatformMessageTextSettings;
const BRANDING = PlatformBrandingSettings;
const SERVICE_OF = {
  SetLanguages: LANGUAGES,
  ResolveLanguages: LANGUAGES,
  SetMessageText: TEXTS,
  ResolveMessageText: TEXTS,
  SetFeatures: FEATURES,
  ResolveFeatures: FEATURES,
  SetBrandingSettings: BRANDING,
  ResolveBrandingSettings: BRANDING,
  SetBrandingImage: BRANDING,
  RemoveBrandingImage: BRANDING,
  PreviewBrandingSettings: BRANDING,
} as const;
type Method = keyof typeof SERVICE_OF;
const METHODS = Object.keys(SERVICE_OF) as Method[];
const REST_STATUS: Record<string, number> = {
  ok: 200,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.Unauthenticated]: 401,
  [Code.FailedPrecondition]: 400,
  [Code.InvalidArgument]: 400,
};

const outcome = (r: CallResult): Outcome => (r.ok ? "ok" : r.code);

describe.each(DATABASE_KINDS)("settings permissions (%s)", (kind) => {
  let server: TestServer;
  let other: Awaited<ReturnType<TestServer["createInstance"]>>;
  let systemOfOther: string;
  let orgA: string;
  let orgB: string;
  const tokens = {} as Record<Caller, string>;

  beforeAll(async () => {
    server = await startTestServer(kind);
    other = await server.createInstance("127.0.0.1");
    orgA = await createOrg(server, "Access A");
    orgB = await createOrg(server, "Access B");
    const user = async (roles: Parameters<TestServer["createUser"]>[0]["roles"]) => (await server.createUser({ roles })).token;
    tokens.admin = server.adminToken;
    tokens.systemOwner = await user([{ context: "system", roles: ["SYSTEM_OWNER"] }]);
    tokens.iamOwner = await user([{ context: "instance", roles: ["IAM_OWNER"] }]);
    tokens.iamViewer = await user([{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }]);
    tokens.orgOwnerA = await user([{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }]);
    tokens.orgViewerA = await user([{ context: "org", contextId: orgA, roles: ["ORG_OWNER_VIEWER"] }]);
    tokens.plainUser = await user([]);
    tokens.userOfA = (await createUserIn(server, orgA)).token;
    systemOfOther = (await server.createUser({ instanceId: other.instanceId, roles: [{ context: "system", roles: ["SYSTEM_OWNER"] }] })).token;
  });
  afterAll(() => server?.close());

  const ctxOf = (c: Ctx): JsonObject | undefined =>
    ({ system: { system: true }, instance: undefined, orgA: { orgId: orgA }, orgB: { orgId: orgB }, defaultOrg: { orgId: server.defaultOrgId } })[c];
  const call = (method: Method, protocol: Protocol, ctx: JsonObject | undefined, token: string | undefined, baseUrl = server.baseUrl) =>
    protocolClient(SERVICE_OF[method], protocol, baseUrl).call(method, { ...REQUESTS[method], ...(ctx && { ctx }) }, token);

  // One test per method and protocol: 40 calls each.
  const cases = (["grpc", "rest"] as const).flatMap((protocol) => METHODS.map((method) => [protocol, method] as const));
  it.each(cases)("answers every caller in every context as the permission table says (%s %s)", async (protocol, method) => {
    const actual = {} as Table;
    const statuses: string[] = [];
    for (const caller of CALLERS) {
      const row = [] as unknown as Table[Caller];
      for (const [i, c] of CTXS.entries()) {
        const r = await call(method, protocol, ctxOf(c), tokens[caller]);
        row[i] = outcome(r);
        if (protocol === "rest" && r.httpStatus !== REST_STATUS[String(row[i])]) statuses.push(`${caller} ${c}: ${r.httpStatus}`);
      }
      actual[caller] = row;
    }
    expect(actual, method).toEqual(EXPECTED[method]);
    expect(statuses, `${method} REST statuses`).toEqual([]);
  });

  it("names the missing permission or membership when it refuses", async () => {
    expect(failed(await call("SetLanguages", "grpc", { orgId: orgB }, tokens.orgOwnerA), PD)).toContain("settings.write");
    expect(failed(await call("SetFeatures", "grpc", undefined, tokens.iamViewer), PD)).toContain("feature.write");
    expect(failed(await call("ResolveFeatures", "grpc", { orgId: orgA }, tokens.orgOwnerA), PD)).toContain("feature.read");
    expect(failed(await call("ResolveLanguages", "grpc", { orgId: orgB }, tokens.userOfA), PD)).toMatch(/belong/);
    expect(failed(await call("ResolveLanguages", "grpc", { system: true }, tokens.iamOwner), PD)).toContain("system");
  });

  it("treats other instances as nonexistent to their own administrators, and lets system members of any instance in", async () => {
    for (const method of METHODS) {
      for (const protocol of ["grpc", "rest"] as const) {
        const label = `${method} ${protocol}`;
        // The other instance's administrator, on its own host, naming our instance: NotFound, as a made-up id.
        const foreign = await call(method, protocol, { instanceId: server.instanceId }, other.adminToken, other.baseUrl);
        expect(outcome(foreign), label).toBe(Code.NotFound);
        expect(outcome(await call(method, protocol, { instanceId: "no-such-instance" }, other.adminToken, other.baseUrl)), label).toBe(Code.NotFound);
        if (protocol === "rest") expect(foreign.httpStatus, label).toBe(404);
        // A system member whose user lives in the other instance reaches ours and the system.
        expect(outcome(await call(method, protocol, { instanceId: server.instanceId }, systemOfOther, other.baseUrl)), label).toBe("ok");
        expect(outcome(await call(method, protocol, { system: true }, systemOfOther, other.baseUrl)), label).toBe("ok");
        // Its token is of its host's instance only: on ours it authenticates nobody.
        expect(outcome(await call(method, protocol, undefined, other.adminToken)), label).toBe(Code.Unauthenticated);
        expect(outcome(await call(method, protocol, undefined, undefined)), label).toBe(Code.Unauthenticated);
        // An organization that does not exist, to who may act in organizations.
        expect(outcome(await call(method, protocol, { orgId: "no-such-org" }, server.adminToken)), label).toBe(Code.NotFound);
      }
    }
    // An organization of another instance cannot be named at all (ctx names organizations of the Host's instance).
    expect(outcome(await call("ResolveLanguages", "grpc", { orgId: other.orgId }, server.adminToken))).toBe(Code.NotFound);
    // The settings of the other instance resolved by a system member are its own, not ours.
    ok(await call("SetLanguages", "grpc", { instanceId: other.instanceId }, server.adminToken));
    const there = ok(await call("ResolveLanguages", "grpc", { instanceId: other.instanceId }, server.adminToken));
    expect(there.details.owner).toEqual({ type: "OWNER_TYPE_INSTANCE", id: other.instanceId });
    expect(there.settings.defaultLanguage).toEqual({ value: "en" });
  });

  it("gates PlatformLanguageSettings by multitenancy_settings after authorization, and never PlatformFeatureSettings", async () => {
    await setInstanceFlag(server, server.instanceId, "multitenancy_settings", false);
    await setInstanceFlag(server, server.instanceId, "multitenancy_resources_api", false);
    try {
      for (const protocol of ["grpc", "rest"] as const) {
        // Allowed callers meet the flag; refused ones are refused first.
        const gated = await call("ResolveLanguages", protocol, undefined, tokens.plainUser);
        expect(failed(gated, Code.FailedPrecondition, protocol)).toContain("multitenancy_settings");
        if (protocol === "rest") expect(gated.httpStatus).toBe(400);
        expect(outcome(await call("SetLanguages", protocol, { orgId: orgA }, tokens.orgOwnerA))).toBe(Code.FailedPrecondition);
        expect(outcome(await call("ResolveBrandingSettings", protocol, undefined, tokens.plainUser))).toBe(Code.FailedPrecondition);
        expect(outcome(await call("SetBrandingImage", protocol, { orgId: orgA }, tokens.orgOwnerA))).toBe(Code.FailedPrecondition);
        expect(outcome(await call("SetLanguages", protocol, { orgId: orgB }, tokens.orgOwnerA))).toBe(PD);
        // The other instance is not gated.
        ok(await call("ResolveLanguages", protocol, undefined, other.adminToken, other.baseUrl));
        // The feature service is reachable with every flag off, for who holds the permission.
        ok(await call("ResolveFeatures", protocol, undefined, tokens.iamOwner));
        ok(await call("SetFeatures", protocol, undefined, tokens.iamOwner));
        expect(outcome(await call("ResolveFeatures", protocol, undefined, tokens.orgOwnerA))).toBe(PD);
      }
    } finally {
      await setInstanceFlag(server, server.instanceId, "multitenancy_settings", undefined);
      await setInstanceFlag(server, server.instanceId, "multitenancy_resources_api", undefined);
    }
    ok(await call("ResolveLanguages", "grpc", undefined, tokens.plainUser));
  });
});
