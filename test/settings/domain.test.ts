import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PlatformDomainSettings } from "../../gen/platform/settings/domain/v3alpha/domain_service_pb.js";
import { validatesOrgDomains } from "../../src/domain/settings/domain.js";
import { PROTOCOLS, protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { SYSTEM_OWNER, createOrg, details, failed, instanceOwner, ok, type Msg } from "./helpers.js";

/**
 * PlatformDomainSettings (`/settings/v3alpha/domain`): validate_org_domains, off by default,
 * set in the system and per instance (never per organization), resolved instance → system
 * with owners and resets, as the other settings kinds; settings.write to set, membership in
 * the context to resolve; the same answers over every protocol.
 */

const SYSTEM = { system: true };

/** The resolved setting with proto3 JSON's dropped defaults (false, no owner) made explicit. */
function resolved(m: Msg) {
  const v = m.settings?.validateOrgDomains;
  return { value: v?.value ?? false, ...(v?.owner && { owner: v.owner }) };
}

describe.each(DATABASE_KINDS)("PlatformDomainSettings (%s)", (kind) => {
  let server: TestServer;
  const client = (protocol: Protocol = "grpc") => {
    const c = protocolClient(PlatformDomainSettings, protocol, server.baseUrl);
    return {
      set: (settings: JsonObject, ctx: JsonObject | undefined, token = server.adminToken) =>
        c.call("SetDomainSettings", { settings, ...(ctx && { ctx }) }, token),
      resolve: (ctx: JsonObject | undefined, token = server.adminToken) => c.call("ResolveDomainSettings", { ...(ctx && { ctx }) }, token),
    };
  };
  const inst = () => ({ instanceId: server.instanceId });
  const resolve = async (ctx: JsonObject | undefined, protocol: Protocol = "grpc") =>
    resolved(ok(await client(protocol).resolve(ctx), `resolve ${JSON.stringify(ctx)}`));

  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());
  afterEach(async () => {
    for (const ctx of [inst(), SYSTEM]) ok(await client().set({ validateOrgDomains: { reset: true } }, ctx), `reset ${JSON.stringify(ctx)}`);
  });

  it("is off by default, owned by the system", async () => {
    expect(await resolve(undefined)).toEqual({ value: false, owner: SYSTEM_OWNER });
    expect(await resolve(inst())).toEqual({ value: false, owner: SYSTEM_OWNER });
    expect(await resolve(SYSTEM)).toEqual({ value: false });
    expect(details(ok(await client().resolve(undefined)))).toEqual({ sequence: 0, changeDate: undefined, owner: instanceOwner(server.instanceId) });
    expect(await validatesOrgDomains(server.service.store.db, server.instanceId)).toBe(false);
  });

  it("inherits system → instance, and a reset falls back to the system's value", async () => {
    const I = instanceOwner(server.instanceId);
    ok(await client().set({ validateOrgDomains: { set: true } }, SYSTEM));
    expect(await resolve(undefined)).toEqual({ value: true, owner: SYSTEM_OWNER });
    expect(await validatesOrgDomains(server.service.store.db, server.instanceId)).toBe(true);

    const set = ok(await client().set({ validateOrgDomains: { set: false } }, inst()));
    expect(details(set)).toEqual({ sequence: expect.any(Number), changeDate: expect.any(String), owner: I });
    // false is a value of the instance's own, not a reset.
    expect(await resolve(undefined)).toEqual({ value: false });
    expect(await validatesOrgDomains(server.service.store.db, server.instanceId)).toBe(false);
    // Writing what is set already changes nothing.
    expect(details(ok(await client().set({ validateOrgDomains: { set: false } }, inst()))).sequence).toBe(details(set).sequence);

    const reset = ok(await client().set({ validateOrgDomains: { reset: true } }, inst()));
    expect(details(reset).sequence).toBeGreaterThan(details(set).sequence);
    expect(await resolve(undefined)).toEqual({ value: true, owner: SYSTEM_OWNER });
    const events = await server.service.store.db
      .selectFrom("events")
      .select("payload")
      .where("instance_id", "=", server.instanceId)
      .where("event_type", "=", "settings.domain.set")
      .orderBy("position")
      .execute();
    expect(events.map((e) => e.payload)).toEqual([
      { set: { validate_org_domains: false }, reset: [] },
      { set: {}, reset: ["validate_org_domains"] },
    ]);

    // Another instance inherits the system's value and keeps its own apart.
    const other = await server.createInstance("domain-settings.example");
    const otherInstance = { instanceId: other.instanceId };
    expect(await resolve(otherInstance)).toEqual({ value: true, owner: SYSTEM_OWNER });
    ok(await client().set({ validateOrgDomains: { set: true } }, inst()));
    ok(await client().set({ validateOrgDomains: { reset: true } }, SYSTEM));
    expect(await resolve(otherInstance)).toEqual({ value: false, owner: SYSTEM_OWNER });
    expect(await resolve(undefined)).toEqual({ value: true });
  });

  it("cannot be set or resolved in an organization, nor set with an empty change", async () => {
    const org = await createOrg(server, `Domain settings ${kind}`);
    for (const protocol of PROTOCOLS) {
      failed(await client(protocol).set({ validateOrgDomains: { set: true } }, { orgId: org }), Code.InvalidArgument, protocol);
      failed(await client(protocol).resolve({ orgId: org }), Code.InvalidArgument, protocol);
      failed(await client(protocol).set({ validateOrgDomains: {} }, undefined), Code.InvalidArgument, protocol);
    }
    expect(await resolve(undefined)).toEqual({ value: false, owner: SYSTEM_OWNER });
  });

  it.each(PROTOCOLS)("sets and resolves over %s (PATCH and GET /settings/v3alpha/domain)", async (protocol) => {
    const set = await client(protocol).set({ validateOrgDomains: { set: true } }, undefined);
    expect(set, JSON.stringify(set)).toMatchObject({ ok: true, ...(protocol === "rest" && { httpStatus: 200 }) });
    expect(await resolve(undefined, protocol)).toEqual({ value: true });
    expect(await resolve(SYSTEM, protocol)).toEqual({ value: false });
    ok(await client(protocol).set({ validateOrgDomains: { reset: true } }, undefined));
    expect(await resolve(undefined, protocol)).toEqual({ value: false, owner: SYSTEM_OWNER });
  });

  it("lets IAM_OWNER set and members of the instance resolve; gated by multitenancy_settings", async () => {
    const org = await createOrg(server, `Domain settings access ${kind}`);
    const iamOwner = (await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] })).token;
    const iamViewer = (await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] })).token;
    const orgOwner = (await server.createUser({ roles: [{ context: "org", contextId: org, roles: ["ORG_OWNER"] }] })).token;
    for (const protocol of ["grpc", "rest"] as const) {
      const c = client(protocol);
      ok(await c.set({ validateOrgDomains: { set: true } }, undefined, iamOwner), protocol);
      ok(await c.set({ validateOrgDomains: { reset: true } }, undefined, iamOwner), protocol);
      expect(failed(await c.set({ validateOrgDomains: { set: true } }, undefined, iamViewer), Code.PermissionDenied, protocol)).toContain("settings.write");
      failed(await c.set({ validateOrgDomains: { set: true } }, undefined, orgOwner), Code.PermissionDenied, protocol);
      failed(await c.set({ validateOrgDomains: { set: true } }, SYSTEM, iamOwner), Code.PermissionDenied, protocol);
      ok(await c.resolve(undefined, iamOwner), protocol);
      ok(await c.resolve(undefined, iamViewer), protocol);
      ok(await c.resolve(undefined, orgOwner), protocol);
      failed(await c.resolve(SYSTEM, iamViewer), Code.PermissionDenied, protocol);
      failed(await c.resolve(undefined, ""), Code.Unauthenticated, protocol);
    }
    expect(await resolve(undefined)).toEqual({ value: false, owner: SYSTEM_OWNER });
    await setInstanceFlag(server, server.instanceId, "multitenancy_settings", false);
    try {
      expect(failed(await client().resolve(undefined, iamOwner), Code.FailedPrecondition)).toContain("multitenancy_settings");
    } finally {
      await setInstanceFlag(server, server.instanceId, "multitenancy_settings", undefined);
    }
  });
});
