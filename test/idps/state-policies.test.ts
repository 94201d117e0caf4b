import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  ACTIVATE,
  ACTIVE,
  DEACTIVATE,
  INACTIVE,
  INHERIT,
  createOrg,
  deleteOrg,
  gitlab,
  idpClient,
  instanceOwner,
  orgOwner,
  systemOwner,
  type Idps,
} from "./helpers.js";

/**
 * Spec §1 "Reusable resources" and §3: an instance provider seen from two organizations, a
 * system provider seen from an instance and an organization, read-only configuration in
 * child contexts, deletion only in the owner.
 */
describe.each(DATABASE_KINDS)("identity provider state policies (%s)", (kind) => {
  let server: TestServer;
  let idps: Idps;
  let orgA: string;
  let orgB: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    idps = idpClient(server.baseUrl, server.adminToken);
    orgA = await createOrg(server.baseUrl, server.adminToken, "State Org A");
    orgB = await createOrg(server.baseUrl, server.adminToken, "State Org B");
  });
  afterAll(() => server?.close());

  const policy = (id: string, ctx: JsonObject | undefined, statePolicy: string, method = "PatchGitLabIDP") =>
    idps.ok(method, { id, ...(ctx && { ctx }), idp: { idp: { statePolicy } } });
  /** What GetIDP says in a context, without the fields that never change here. */
  const seen = async (id: string, ctx?: JsonObject) => {
    const got = (await idps.ok("GetIDP", { id, ...(ctx && { ctx }) })).idp;
    return { parent: got.parent, state: got.state, statePolicy: got.idp.statePolicy };
  };
  const policyRows = async (id: string) =>
    (
      await server.service.store.db
        .selectFrom("idp_state_policies")
        .select(["instance_id", "org_id", "policy"])
        .where("idp_id", "=", id)
        .orderBy("org_id")
        .execute()
    ).map((r) => ({ ...r }));

  describe("an instance provider seen from two organizations (spec §3 table)", () => {
    let id: string;
    let created: { details: { id: string; changeDate: string } };
    beforeAll(async () => {
      created = await idps.ok("CreateGitLabIDP", { idp: gitlab("Instance GitLab") });
      id = created.details.id;
    });

    it("is owned by the instance and read in full there, without parent", async () => {
      expect(created).toEqual({ details: { id, sequence: "1", changeDate: expect.any(String), resourceOwner: instanceOwner(server.instanceId) } });
      expect(await idps.ok("GetGitLabIDP", { id })).toEqual({
        idp: {
          details: { id, sequence: "1", changeDate: created.details.changeDate, resourceOwner: instanceOwner(server.instanceId) },
          state: ACTIVE,
          type: "PROVIDER_TYPE_GITLAB",
          idp: { idp: { name: "Instance GitLab", statePolicy: INHERIT, options: {} }, config: { clientId: "Instance GitLab-client", scopes: ["openid"] } },
        },
      });
      // The same with the instance named explicitly.
      expect(await seen(id, { instanceId: server.instanceId })).toEqual({ parent: undefined, state: ACTIVE, statePolicy: INHERIT });
    });

    it("is visible in both organizations, inheriting, with the instance as parent", async () => {
      const parent = { parent: instanceOwner(server.instanceId), state: ACTIVE };
      for (const org of [orgA, orgB]) {
        const got = await idps.ok("GetGitLabIDP", { id, ctx: { orgId: org } });
        expect(got).toEqual({
          idp: {
            details: { id, sequence: "1", changeDate: created.details.changeDate, resourceOwner: instanceOwner(server.instanceId) },
            parent,
            state: ACTIVE,
            type: "PROVIDER_TYPE_GITLAB",
            idp: { idp: { name: "Instance GitLab", statePolicy: INHERIT, options: {} }, config: { clientId: "Instance GitLab-client", scopes: ["openid"] } },
          },
        });
      }
    });

    it("names the same contexts by domain as by id", async () => {
      expect(await idps.ok("GetIDP", { id, ctx: { orgDomain: "state-org-a.localhost" } })).toEqual(await idps.ok("GetIDP", { id, ctx: { orgId: orgA } }));
      expect(await idps.ok("GetIDP", { id, ctx: { instanceDomain: "localhost" } })).toEqual(await idps.ok("GetIDP", { id }));
    });

    it("inherit → deactivate in org A: inactive in A only", async () => {
      const patched = await policy(id, { orgId: orgA }, DEACTIVATE);
      expect(patched.details).toMatchObject({ id, resourceOwner: instanceOwner(server.instanceId) });
      expect(await seen(id, { orgId: orgA })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: ACTIVE },
        state: INACTIVE,
        statePolicy: DEACTIVATE,
      });
      expect(await seen(id, { orgId: orgB })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: ACTIVE },
        state: ACTIVE,
        statePolicy: INHERIT,
      });
      expect(await seen(id)).toEqual({ parent: undefined, state: ACTIVE, statePolicy: INHERIT });
      expect(await policyRows(id)).toEqual([{ instance_id: server.instanceId, org_id: orgA, policy: "deactivate" }]);
      // The owner's configuration and sequence are untouched by a child's policy.
      expect((await idps.ok("GetIDP", { id })).idp.details.sequence).toBe("1");
    });

    it("deactivate → inherit in org A: follows the instance again", async () => {
      await policy(id, { orgId: orgA }, INHERIT);
      expect(await seen(id, { orgId: orgA })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: ACTIVE },
        state: ACTIVE,
        statePolicy: INHERIT,
      });
      expect(await policyRows(id)).toEqual([]);
    });

    it("the same policy again changes nothing and answers as the change did", async () => {
      const before = await idps.ok("GetIDP", { id, ctx: { orgId: orgA } });
      const off = await policy(id, { orgId: orgA }, DEACTIVATE);
      expect((await policy(id, { orgId: orgA }, DEACTIVATE)).details).toEqual(off.details);
      const back = await policy(id, { orgId: orgA }, INHERIT);
      expect(Number(back.details.sequence)).toBe(Number(off.details.sequence) + 1);
      expect((await policy(id, { orgId: orgA }, INHERIT)).details).toEqual(back.details);
      expect(await idps.ok("GetIDP", { id, ctx: { orgId: orgA } })).toEqual(before);
    });

    it("instance deactivates its own, org A activates: A active, B (inheriting) inactive", async () => {
      const owned = await policy(id, undefined, DEACTIVATE);
      expect(owned.details).toMatchObject({ id, sequence: "2", resourceOwner: instanceOwner(server.instanceId) });
      await policy(id, { orgId: orgA }, ACTIVATE);
      const parent = { parent: instanceOwner(server.instanceId), state: INACTIVE };
      expect(await seen(id)).toEqual({ parent: undefined, state: INACTIVE, statePolicy: DEACTIVATE });
      expect(await seen(id, { orgId: orgA })).toEqual({ parent, state: ACTIVE, statePolicy: ACTIVATE });
      expect(await seen(id, { orgId: orgB })).toEqual({ parent, state: INACTIVE, statePolicy: INHERIT });
      // Visible in B even though inactive there.
      expect((await idps.ok("SearchIDPs", { ctx: { orgId: orgB }, filters: [{ id: { id } }] })).result).toHaveLength(1);
      // Back to inherit in A follows the (inactive) instance.
      await policy(id, { orgId: orgA }, INHERIT);
      expect(await seen(id, { orgId: orgA })).toEqual({ parent, state: INACTIVE, statePolicy: INHERIT });
      // The owner's ACTIVATE counts as active.
      await policy(id, undefined, ACTIVATE);
      expect(await seen(id)).toEqual({ parent: undefined, state: ACTIVE, statePolicy: ACTIVATE });
      expect(await seen(id, { orgId: orgB })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: ACTIVE },
        state: ACTIVE,
        statePolicy: INHERIT,
      });
      await policy(id, undefined, INHERIT);
    });

    it("an ORG_OWNER of A switches the instance provider off for A, but may not change its configuration", async () => {
      const owner = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }] });
      const asOwner = idpClient(server.baseUrl, owner.token);
      // Without ctx the request acts in the instance: denied, with a hint to name the context.
      const noCtx = await asOwner.call("GetIDP", { id });
      expect(noCtx).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect((noCtx as { message: string }).message).toContain("ctx");
      expect(await asOwner.call("PatchGitLabIDP", { id, idp: { idp: { statePolicy: DEACTIVATE } } })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      // In its organization it reads and switches.
      await asOwner.ok("PatchGitLabIDP", { id, ctx: { orgId: orgA }, idp: { idp: { statePolicy: DEACTIVATE } } });
      expect((await asOwner.ok("GetGitLabIDP", { id, ctx: { orgId: orgA } })).idp).toMatchObject({
        state: INACTIVE,
        idp: { idp: { statePolicy: DEACTIVATE } },
      });
      expect(await seen(id, { orgId: orgB })).toMatchObject({ state: ACTIVE, statePolicy: INHERIT });
      // Not in org B, not the configuration, not in the instance.
      expect(await asOwner.call("PatchGitLabIDP", { id, ctx: { orgId: orgB }, idp: { idp: { statePolicy: DEACTIVATE } } })).toMatchObject({
        ok: false,
        code: Code.PermissionDenied,
      });
      expect(await asOwner.call("GetIDP", { id, ctx: { orgId: orgB } })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      const config = await asOwner.call("PatchGitLabIDP", { id, ctx: { orgId: orgA }, idp: { config: { clientId: "hijack" } } });
      expect(config).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await asOwner.call("CreateGitLabIDP", { idp: gitlab("Owner Instance") })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await asOwner.call("CreateGitLabIDP", { idp: gitlab("Owner Instance"), ctx: { instanceId: server.instanceId } })).toMatchObject({
        ok: false,
        code: Code.PermissionDenied,
      });
      expect(await asOwner.call("DeleteIDP", { id, ctx: { orgId: orgA } })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      // It may create its own in its organization, and delete it.
      const own = await asOwner.ok("CreateGitLabIDP", { idp: gitlab("Owner Org"), ctx: { orgId: orgA } });
      expect(own.details.resourceOwner).toEqual(orgOwner(orgA));
      expect((await asOwner.ok("DeleteIDP", { id: own.details.id })).details).toMatchObject({ id: own.details.id, resourceOwner: orgOwner(orgA) });
      await policy(id, { orgId: orgA }, INHERIT);
    });

    it("refuses configuration changes in a child context, naming the owner", async () => {
      const before = await idps.ok("GetGitLabIDP", { id });
      for (const change of [
        { idp: { name: "renamed" } },
        { idp: { name: "renamed", statePolicy: DEACTIVATE } },
        { idp: { options: { isAutoCreation: true } } },
        { config: { clientId: "other" } },
        { config: { clientSecret: "other-secret" } },
        { config: { scopes: ["email"] } },
      ] as JsonObject[]) {
        const r = await idps.call("PatchGitLabIDP", { id, ctx: { orgId: orgA }, idp: change });
        expect(r, JSON.stringify(change)).toMatchObject({ ok: false, code: Code.FailedPrecondition });
        expect((r as { message: string }).message).toBe(
          `identity provider ${id} is configured in instance ${server.instanceId}; in organization ${orgA} only its state policy can change`,
        );
      }
      expect(await idps.ok("GetGitLabIDP", { id })).toEqual(before);
      expect(await seen(id, { orgId: orgA })).toMatchObject({ statePolicy: INHERIT });
    });

    it("refuses STATE_POLICY_UNSPECIFIED in a patch, in the owner and in a child", async () => {
      for (const ctx of [undefined, { orgId: orgA }]) {
        const r = await idps.call("PatchGitLabIDP", { id, ...(ctx && { ctx }), idp: { idp: { statePolicy: "STATE_POLICY_UNSPECIFIED" } } });
        expect(r, JSON.stringify(ctx)).toMatchObject({ ok: false, code: Code.InvalidArgument });
      }
    });

    it("an empty patch in a child changes nothing", async () => {
      const before = await idps.ok("GetIDP", { id, ctx: { orgId: orgA } });
      const r = await idps.ok("PatchGitLabIDP", { id, ctx: { orgId: orgA }, idp: {} });
      expect(r.details).toMatchObject({ id, sequence: before.idp.details.sequence });
      expect(await idps.ok("GetIDP", { id, ctx: { orgId: orgA } })).toEqual(before);
    });
  });

  describe("a system provider seen from the instance and an organization", () => {
    let id: string;
    beforeAll(async () => {
      const made = await idps.ok("CreateGitLabIDP", { idp: gitlab("System GitLab"), ctx: { system: true } });
      expect(made.details).toEqual({ id: made.details.id, sequence: "1", changeDate: expect.any(String), resourceOwner: systemOwner });
      id = made.details.id;
    });

    it("has the system as parent in the instance, the instance as parent in an org", async () => {
      expect(await seen(id)).toEqual({ parent: undefined, state: ACTIVE, statePolicy: INHERIT });
      expect(await seen(id, { system: true })).toEqual({ parent: undefined, state: ACTIVE, statePolicy: INHERIT });
      expect(await seen(id, { instanceId: server.instanceId })).toEqual({
        parent: { parent: systemOwner, state: ACTIVE },
        state: ACTIVE,
        statePolicy: INHERIT,
      });
      expect(await seen(id, { orgId: orgA })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: ACTIVE },
        state: ACTIVE,
        statePolicy: INHERIT,
      });
      expect((await idps.ok("GetGitLabIDP", { id, ctx: { orgId: orgA } })).idp.details.resourceOwner).toEqual(systemOwner);
    });

    it("instance deactivates: an inheriting org is inactive; the org activates: active", async () => {
      await policy(id, { instanceId: server.instanceId }, DEACTIVATE);
      expect(await seen(id, { system: true })).toEqual({ parent: undefined, state: ACTIVE, statePolicy: INHERIT });
      expect(await seen(id, { instanceId: server.instanceId })).toEqual({
        parent: { parent: systemOwner, state: ACTIVE },
        state: INACTIVE,
        statePolicy: DEACTIVATE,
      });
      expect(await seen(id, { orgId: orgA })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: INACTIVE },
        state: INACTIVE,
        statePolicy: INHERIT,
      });
      await policy(id, { orgId: orgA }, ACTIVATE);
      expect(await seen(id, { orgId: orgA })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: INACTIVE },
        state: ACTIVE,
        statePolicy: ACTIVATE,
      });
      expect(await seen(id, { orgId: orgB })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: INACTIVE },
        state: INACTIVE,
        statePolicy: INHERIT,
      });
      expect(await policyRows(id)).toEqual(
        [
          { instance_id: server.instanceId, org_id: "", policy: "deactivate" },
          { instance_id: server.instanceId, org_id: orgA, policy: "activate" },
        ].sort((a, b) => a.org_id.localeCompare(b.org_id)),
      );
    });

    it("system deactivates: the instance (inheriting) and org B are inactive, org A keeps its activate", async () => {
      await policy(id, { instanceId: server.instanceId }, INHERIT);
      await policy(id, { system: true }, DEACTIVATE);
      expect(await seen(id, { system: true })).toEqual({ parent: undefined, state: INACTIVE, statePolicy: DEACTIVATE });
      expect(await seen(id, { instanceId: server.instanceId })).toEqual({
        parent: { parent: systemOwner, state: INACTIVE },
        state: INACTIVE,
        statePolicy: INHERIT,
      });
      expect(await seen(id, { orgId: orgB })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: INACTIVE },
        state: INACTIVE,
        statePolicy: INHERIT,
      });
      expect(await seen(id, { orgId: orgA })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: INACTIVE },
        state: ACTIVE,
        statePolicy: ACTIVATE,
      });
      await policy(id, { system: true }, INHERIT);
    });

    it("is read-only in the instance, naming the system", async () => {
      const r = await idps.call("PatchGitLabIDP", { id, ctx: { instanceId: server.instanceId }, idp: { idp: { name: "x" } } });
      expect(r).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect((r as { message: string }).message).toBe(
        `identity provider ${id} is configured in the system; in instance ${server.instanceId} only its state policy can change`,
      );
      expect(await idps.call("DeleteIDP", { id, ctx: { instanceId: server.instanceId } })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    });

    it("an IAM_OWNER (no system membership) reads it and switches it off for the instance only", async () => {
      const iam = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
      const asIam = idpClient(server.baseUrl, iam.token);
      expect(await asIam.call("GetIDP", { id })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect((await asIam.ok("GetIDP", { id, ctx: { instanceId: server.instanceId } })).idp).toMatchObject({ state: ACTIVE, parent: { parent: systemOwner } });
      expect(await asIam.call("CreateGitLabIDP", { idp: gitlab("IAM system"), ctx: { system: true } })).toMatchObject({
        ok: false,
        code: Code.PermissionDenied,
      });
      await asIam.ok("PatchGitLabIDP", { id, ctx: { instanceId: server.instanceId }, idp: { idp: { statePolicy: DEACTIVATE } } });
      expect(await seen(id, { instanceId: server.instanceId })).toMatchObject({ state: INACTIVE, statePolicy: DEACTIVATE });
      expect(await seen(id, { system: true })).toMatchObject({ state: ACTIVE });
      await asIam.ok("PatchGitLabIDP", { id, ctx: { instanceId: server.instanceId }, idp: { idp: { statePolicy: INHERIT } } });
    });
  });

  describe("owner policies and sibling contexts", () => {
    it("a provider created DEACTIVATE is inactive in its owner and in inheriting children", async () => {
      const made = await idps.ok("CreateGitLabIDP", { idp: gitlab("Created Off", { statePolicy: DEACTIVATE }) });
      const id = made.details.id;
      expect(await seen(id)).toEqual({ parent: undefined, state: INACTIVE, statePolicy: DEACTIVATE });
      expect(await seen(id, { orgId: orgA })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: INACTIVE },
        state: INACTIVE,
        statePolicy: INHERIT,
      });
      await policy(id, { orgId: orgA }, ACTIVATE);
      expect(await seen(id, { orgId: orgA })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: INACTIVE },
        state: ACTIVE,
        statePolicy: ACTIVATE,
      });
      // Deactivating a child that is already inactive through inheritance is still its own policy.
      await policy(id, { orgId: orgB }, DEACTIVATE);
      expect(await seen(id, { orgId: orgB })).toEqual({
        parent: { parent: instanceOwner(server.instanceId), state: INACTIVE },
        state: INACTIVE,
        statePolicy: DEACTIVATE,
      });
      await policy(id, undefined, INHERIT);
      expect(await seen(id, { orgId: orgB })).toMatchObject({ state: INACTIVE, statePolicy: DEACTIVATE, parent: { state: ACTIVE } });
      await idps.ok("DeleteIDP", { id });
    });

    it("an organization's provider is not visible in a sibling organization nor patchable from above", async () => {
      const id = (await idps.ok("CreateGitLabIDP", { idp: gitlab("Org A only"), ctx: { orgId: orgA } })).details.id;
      expect(await idps.call("GetIDP", { id, ctx: { orgId: orgB } })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await idps.call("GetGitLabIDP", { id, ctx: { orgId: orgB } })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await idps.call("PatchGitLabIDP", { id, ctx: { orgId: orgB }, idp: { idp: { statePolicy: DEACTIVATE } } })).toMatchObject({
        ok: false,
        code: Code.NotFound,
      });
      // From the instance (above the owner) it is read-only and has no policy of its own.
      expect(await seen(id, { instanceId: server.instanceId })).toEqual({ parent: undefined, state: ACTIVE, statePolicy: INHERIT });
      const up = await idps.call("PatchGitLabIDP", { id, ctx: { instanceId: server.instanceId }, idp: { idp: { statePolicy: DEACTIVATE } } });
      expect(up).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect((up as { message: string }).message).toContain(`organization ${orgA}`);
      expect(await idps.call("DeleteIDP", { id, ctx: { instanceId: server.instanceId } })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await policyRows(id)).toEqual([]);
      // Without ctx the admin acts in the owning organization.
      await policy(id, undefined, DEACTIVATE);
      expect(await seen(id, { orgId: orgA })).toEqual({ parent: undefined, state: INACTIVE, statePolicy: DEACTIVATE });
      await idps.ok("DeleteIDP", { id });
    });

    it("deleting a system provider removes the policies of every instance and organization", async () => {
      const other = await server.createInstance("127.0.0.1");
      const id = (await idps.ok("CreateGitLabIDP", { idp: gitlab("System Doomed"), ctx: { system: true } })).details.id;
      await policy(id, { instanceId: server.instanceId }, DEACTIVATE);
      await policy(id, { orgId: orgA }, ACTIVATE);
      const theirs = idpClient(other.baseUrl, other.adminToken);
      await theirs.ok("PatchGitLabIDP", { id, ctx: { instanceId: other.instanceId }, idp: { idp: { statePolicy: DEACTIVATE } } });
      expect((await theirs.ok("GetIDP", { id, ctx: { instanceId: other.instanceId } })).idp).toMatchObject({
        state: INACTIVE,
        parent: { parent: systemOwner, state: ACTIVE },
      });
      // Our instance is unaffected by theirs.
      expect(await seen(id, { orgId: orgB })).toMatchObject({ state: INACTIVE, parent: { state: INACTIVE } });
      expect(await policyRows(id)).toHaveLength(3);
      expect(await theirs.call("DeleteIDP", { id, ctx: { instanceId: other.instanceId } })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await idps.call("DeleteIDP", { id, ctx: { instanceId: server.instanceId } })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect((await idps.ok("DeleteIDP", { id })).details).toMatchObject({ id, resourceOwner: systemOwner });
      expect(await policyRows(id)).toEqual([]);
      expect(await theirs.call("GetIDP", { id, ctx: { instanceId: other.instanceId } })).toMatchObject({ ok: false, code: Code.NotFound });
    });
  });

  describe("deletion", () => {
    it("happens only in the owner and takes every child's policy with it", async () => {
      const id = (await idps.ok("CreateGitLabIDP", { idp: gitlab("Doomed") })).details.id;
      await policy(id, { orgId: orgA }, DEACTIVATE);
      await policy(id, { orgId: orgB }, ACTIVATE);
      expect(await policyRows(id)).toHaveLength(2);
      const refused = await idps.call("DeleteIDP", { id, ctx: { orgId: orgA } });
      expect(refused).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect((refused as { message: string }).message).toContain(`instance ${server.instanceId}`);
      expect(await policyRows(id)).toHaveLength(2);
      const deleted = await idps.ok("DeleteIDP", { id });
      expect(deleted).toEqual({ details: { id, sequence: "2", changeDate: expect.any(String), resourceOwner: instanceOwner(server.instanceId) } });
      expect(await policyRows(id)).toEqual([]);
      for (const ctx of [undefined, { orgId: orgA }]) {
        expect(await idps.call("GetIDP", { id, ...(ctx && { ctx }) })).toMatchObject({ ok: false, code: Code.NotFound });
      }
      expect(await idps.call("DeleteIDP", { id })).toMatchObject({ ok: false, code: Code.NotFound });
      expect((await idps.ok("SearchIDPs", { filters: [{ id: { id } }] })).result ?? []).toEqual([]);
    });

    it("of an organization removes its providers and its policies for providers above it", async () => {
      const orgC = await createOrg(server.baseUrl, server.adminToken, "State Org C");
      const own = (await idps.ok("CreateGitLabIDP", { idp: gitlab("Org C GitLab"), ctx: { orgId: orgC } })).details.id;
      const inst = (await idps.ok("CreateGitLabIDP", { idp: gitlab("Kept GitLab") })).details.id;
      await policy(inst, { orgId: orgC }, DEACTIVATE);
      await policy(inst, { orgId: orgA }, DEACTIVATE);
      expect(await seen(own, { orgId: orgC })).toEqual({ parent: undefined, state: ACTIVE, statePolicy: INHERIT });
      // Seen from the instance: no parent, the state in its owner.
      expect(await seen(own, { instanceId: server.instanceId })).toEqual({ parent: undefined, state: ACTIVE, statePolicy: INHERIT });
      await deleteOrg(server.baseUrl, server.adminToken, orgC);
      const db = server.service.store.db;
      expect(await db.selectFrom("idps").select("id").where("id", "=", own).execute()).toEqual([]);
      expect(await db.selectFrom("idp_state_policies").select("org_id").where("org_id", "=", orgC).execute()).toEqual([]);
      expect(await policyRows(inst)).toEqual([{ instance_id: server.instanceId, org_id: orgA, policy: "deactivate" }]);
      expect(await idps.call("GetIDP", { id: own })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await seen(inst, { orgId: orgA })).toMatchObject({ state: INACTIVE });
    });
  });
});
