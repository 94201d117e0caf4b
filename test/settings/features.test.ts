import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { FEATURES, SYSTEM_OWNER, createOrg, details, failed, featureClient, instanceOwner, languageClient, ok, orgOwner, type Msg } from "./helpers.js";

/**
 * PlatformFeatureSettings: system defaults from PLATFORM_FEATURES, changes in the system,
 * per-instance and (where the catalogue allows) per-org overrides, resets, and their effect
 * on the gated services at the next request.
 */

const FLAGS = ["multitenancyResourcesApi", "multitenancySettings", "actions", "tokenExchange"] as const;
type Flag = (typeof FLAGS)[number];

/** Every flag with proto3 JSON defaults (false, no owner) made explicit. */
function resolvedFlags(m: Msg): Record<Flag, { value: boolean; owner?: unknown }> {
  const s = m.settings ?? {};
  return Object.fromEntries(FLAGS.map((f) => [f, { value: s[f]?.value ?? false, ...(s[f]?.owner && { owner: s[f].owner }) }])) as never;
}

const flagsOf = (values: Record<Flag, boolean>, owner: (f: Flag) => unknown) =>
  Object.fromEntries(FLAGS.map((f) => [f, { value: values[f], ...(owner(f) !== undefined && { owner: owner(f) }) }]));

const DEFAULTS: Record<Flag, boolean> = { multitenancyResourcesApi: true, multitenancySettings: true, actions: true, tokenExchange: false };
const SYSTEM = { system: true };

describe.each(DATABASE_KINDS)("PlatformFeatureSettings levels, defaults and overrides (%s)", (kind) => {
  let server: TestServer;
  let other: Awaited<ReturnType<TestServer["createInstance"]>>;
  let orgA: string;
  let api: ReturnType<typeof featureClient>;
  const token = () => server.adminToken;
  const inst = () => ({ instanceId: server.instanceId });
  const resolve = async (ctx: JsonObject | undefined) => resolvedFlags(ok(await api.resolve(ctx, token()), `resolve ${JSON.stringify(ctx)}`));

  beforeAll(async () => {
    server = await startTestServer(kind);
    other = await server.createInstance("127.0.0.1");
    api = featureClient(server);
    orgA = await createOrg(server, "Features A");
  });
  afterAll(() => server?.close());
  // Every test starts with nothing set anywhere.
  afterEach(async () => {
    const resetAll = Object.fromEntries(FLAGS.map((f) => [f, { reset: true }]));
    const { tokenExchange } = resetAll;
    ok(await api.set({ tokenExchange: tokenExchange! }, { orgId: orgA }, token()), "reset org");
    for (const ctx of [inst(), { instanceId: other.instanceId }, SYSTEM]) ok(await api.set(resetAll, ctx, token()), `reset ${JSON.stringify(ctx)}`);
  });

  it("resolves the configured system defaults (all on but token_exchange), owned by the system", async () => {
    const owned = flagsOf(DEFAULTS, () => SYSTEM_OWNER);
    expect(await resolve(inst())).toEqual(owned);
    expect(await resolve(undefined)).toEqual(owned);
    expect(await resolve({ orgId: orgA })).toEqual(owned);
    expect(await resolve({ instanceId: other.instanceId })).toEqual(owned);
    // In the system itself the defaults are its own.
    expect(await resolve(SYSTEM)).toEqual(flagsOf(DEFAULTS, () => undefined));
    expect(details(ok(await api.resolve(inst(), token())))).toEqual({ sequence: 0, changeDate: undefined, owner: instanceOwner(server.instanceId) });
    expect(details(ok(await api.resolve({ orgId: orgA }, token())))).toEqual({ sequence: 0, changeDate: undefined, owner: orgOwner(orgA) });
  });

  it("applies a change in the system to every instance that does not override it; an instance override wins until reset", async () => {
    const sys = details(ok(await api.set({ actions: { set: false }, tokenExchange: { set: true } }, SYSTEM, token())));
    expect(sys).toEqual({ sequence: 1, changeDate: expect.any(String), owner: SYSTEM_OWNER });
    const fromSystem = flagsOf({ ...DEFAULTS, actions: false, tokenExchange: true }, () => SYSTEM_OWNER);
    expect(await resolve(inst())).toEqual(fromSystem);
    expect(await resolve({ instanceId: other.instanceId })).toEqual(fromSystem);
    expect(await resolve({ orgId: orgA })).toEqual(fromSystem);
    expect(await resolve(SYSTEM)).toEqual(flagsOf({ ...DEFAULTS, actions: false, tokenExchange: true }, () => undefined));

    // Our instance turns actions on again for itself.
    const I = instanceOwner(server.instanceId);
    expect(details(ok(await api.set({ actions: { set: true } }, inst(), token())))).toEqual({ sequence: 1, changeDate: expect.any(String), owner: I });
    expect(await resolve(inst())).toEqual({ ...fromSystem, actions: { value: true } });
    expect(await resolve({ orgId: orgA })).toEqual({ ...fromSystem, actions: { value: true, owner: I } });
    expect(await resolve({ instanceId: other.instanceId })).toEqual(fromSystem);
    // Its actions API works, the other instance's is gated.
    const actionsHere = protocolClient(PlatformActions, "grpc", server.baseUrl);
    const actionsThere = protocolClient(PlatformActions, "grpc", other.baseUrl);
    ok(await actionsHere.call("SearchTargets", {}, token()));
    expect(failed(await actionsThere.call("SearchTargets", {}, other.adminToken), Code.FailedPrecondition)).toContain("actions");

    // The same value again changes nothing.
    expect(details(ok(await api.set({ actions: { set: true } }, inst(), token())))).toMatchObject({ sequence: 1 });
    // Reset: back to the system's.
    expect(details(ok(await api.set({ actions: { reset: true } }, inst(), token())))).toMatchObject({ sequence: 2, owner: I });
    expect(await resolve(inst())).toEqual(fromSystem);
    expect(failed(await actionsHere.call("SearchTargets", {}, token()), Code.FailedPrecondition)).toContain("actions");
    // A reset of what the context does not set changes nothing.
    expect(details(ok(await api.set({ actions: { reset: true } }, inst(), token())))).toMatchObject({ sequence: 2 });
    // The system's change undone: everything on again.
    ok(await api.set({ actions: { reset: true } }, SYSTEM, token()));
    ok(await actionsHere.call("SearchTargets", {}, token()));
    ok(await actionsThere.call("SearchTargets", {}, other.adminToken));
  });

  it("allows per-organization values only for flags whose catalogue allows it (token_exchange); elsewhere InvalidArgument", async () => {
    for (const flag of ["multitenancyResourcesApi", "multitenancySettings", "actions"] as const) {
      for (const change of <JsonObject[]>[{ set: true }, { set: false }, { reset: true }]) {
        const message = failed(await api.set({ [flag]: change }, { orgId: orgA }, token()), Code.InvalidArgument, `${flag} ${JSON.stringify(change)}`);
        expect(message).toContain(flag.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
      }
    }
    // A refused flag refuses the whole request, the allowed one in it too.
    failed(await api.set({ tokenExchange: { set: true }, actions: { set: false } }, { orgId: orgA }, token()), Code.InvalidArgument);
    expect(await server.service.store.db.selectFrom("settings").selectAll().where("org_id", "=", orgA).execute()).toEqual([]);

    const O = orgOwner(orgA);
    expect(details(ok(await api.set({ tokenExchange: { set: true } }, { orgId: orgA }, token())))).toEqual({
      sequence: 1,
      changeDate: expect.any(String),
      owner: O,
    });
    expect(await resolve({ orgId: orgA })).toEqual({ ...flagsOf(DEFAULTS, () => SYSTEM_OWNER), tokenExchange: { value: true } });
    expect(await resolve(inst())).toEqual(flagsOf(DEFAULTS, () => SYSTEM_OWNER));
    // The instance's value shows in the org once the org resets its own.
    ok(await api.set({ tokenExchange: { set: true } }, inst(), token()));
    ok(await api.set({ tokenExchange: { set: false } }, { orgId: orgA }, token()));
    expect((await resolve({ orgId: orgA })).tokenExchange).toEqual({ value: false });
    ok(await api.set({ tokenExchange: { reset: true } }, { orgId: orgA }, token()));
    expect((await resolve({ orgId: orgA })).tokenExchange).toEqual({ value: true, owner: instanceOwner(server.instanceId) });
    expect(details(ok(await api.resolve({ orgId: orgA }, token())))).toMatchObject({ sequence: 3, owner: O });
  });

  it("refuses malformed SetBool values", async () => {
    for (const change of <JsonObject[]>[{}, { reset: false }]) {
      failed(await api.set({ actions: change }, inst(), token()), Code.InvalidArgument, JSON.stringify(change));
    }
    failed(await protocolClient(FEATURES, "grpc", server.baseUrl).call("SetFeatures", { ctx: inst() }, token()), Code.InvalidArgument);
    // Nothing changes: an empty settings message is a no-op.
    expect(details(ok(await api.set({}, inst(), token())))).toMatchObject({ owner: instanceOwner(server.instanceId) });
    expect(await resolve(inst())).toEqual(flagsOf(DEFAULTS, () => SYSTEM_OWNER));
  });

  it("takes effect on the next request: multitenancy_settings off in the instance gates PlatformLanguageSettings, reset restores it", async () => {
    const languages = languageClient(server);
    ok(await languages.resolve(undefined, token()));
    ok(await api.set({ multitenancySettings: { set: false } }, inst(), token()));
    for (const ctx of [undefined, inst(), { orgId: orgA }, SYSTEM]) {
      expect(failed(await languages.resolve(ctx, token()), Code.FailedPrecondition, JSON.stringify(ctx))).toContain("multitenancy_settings");
      expect(failed(await languages.set({ defaultLanguage: { key: "de" } }, ctx, token()), Code.FailedPrecondition, JSON.stringify(ctx))).toContain(
        "multitenancy_settings",
      );
    }
    // The other instance is not affected.
    ok(await languageClient(server, "grpc", other.baseUrl).resolve(undefined, other.adminToken));
    // The feature service itself is never gated: the flag can be turned back on.
    ok(await api.set({ multitenancySettings: { reset: true } }, inst(), token()));
    ok(await languages.resolve(undefined, token()));

    // Off in the system: gated wherever not overridden.
    ok(await api.set({ multitenancySettings: { set: false } }, SYSTEM, token()));
    failed(await languages.resolve(undefined, token()), Code.FailedPrecondition);
    failed(await languageClient(server, "grpc", other.baseUrl).resolve(undefined, other.adminToken), Code.FailedPrecondition);
    ok(await api.set({ multitenancySettings: { set: true } }, inst(), token()));
    ok(await languages.resolve(undefined, token()));
    failed(await languageClient(server, "grpc", other.baseUrl).resolve(undefined, other.adminToken), Code.FailedPrecondition);
    // Turning the resource API flag off does not lock out the feature service.
    ok(await api.set({ multitenancyResourcesApi: { set: false } }, inst(), token()));
    ok(await api.resolve(inst(), token()));
    ok(await api.set({ multitenancyResourcesApi: { reset: true } }, inst(), token()));
  });
});

describe.each(DATABASE_KINDS)("PlatformFeatureSettings defaults from PLATFORM_FEATURES (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_FEATURES: "actions=off,token_exchange=on,multitenancy_settings=off" });
  });
  afterAll(() => server?.close());

  it("resolves the configured defaults as the system's, gates accordingly, and lets an instance override them", async () => {
    const api = featureClient(server);
    const configured = { multitenancyResourcesApi: true, multitenancySettings: false, actions: false, tokenExchange: true };
    expect(resolvedFlags(ok(await api.resolve(undefined, server.adminToken)))).toEqual(flagsOf(configured, () => SYSTEM_OWNER));
    expect(resolvedFlags(ok(await api.resolve(SYSTEM, server.adminToken)))).toEqual(flagsOf(configured, () => undefined));
    expect(
      failed(await protocolClient(PlatformActions, "grpc", server.baseUrl).call("SearchTargets", {}, server.adminToken), Code.FailedPrecondition),
    ).toContain("actions");
    expect(failed(await languageClient(server).resolve(undefined, server.adminToken), Code.FailedPrecondition)).toContain("multitenancy_settings");
    // Nothing is stored for defaults from configuration.
    expect(await server.service.store.db.selectFrom("settings").selectAll().where("kind", "=", "feature").execute()).toEqual([]);

    ok(await api.set({ multitenancySettings: { set: true } }, { instanceId: server.instanceId }, server.adminToken));
    ok(await languageClient(server).resolve(undefined, server.adminToken));
    expect(resolvedFlags(ok(await api.resolve(undefined, server.adminToken)))).toEqual({
      ...flagsOf(configured, () => SYSTEM_OWNER),
      multitenancySettings: { value: true },
    });
    // A change in the system context overrides the configured default.
    ok(await api.set({ actions: { set: true } }, SYSTEM, server.adminToken));
    ok(await protocolClient(PlatformActions, "grpc", server.baseUrl).call("SearchTargets", {}, server.adminToken));
    expect(resolvedFlags(ok(await api.resolve(undefined, server.adminToken))).actions).toEqual({ value: true, owner: SYSTEM_OWNER });
    // Its reset brings the configured default back.
    ok(await api.set({ actions: { reset: true } }, SYSTEM, server.adminToken));
    failed(await protocolClient(PlatformActions, "grpc", server.baseUrl).call("SearchTargets", {}, server.adminToken), Code.FailedPrecondition);
  });
});
