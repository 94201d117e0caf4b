import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { caller, createOrg, MEMBERS, ok, type Msg } from "./helpers.js";

/**
 * ListAvailableRoles: the roles of the ctx's kind of context with their permissions, for any
 * authenticated caller. The permission lists are the role table of docs/api.md, by hand.
 */

const ORG_OWNER = [
  "org.read",
  "org.write",
  "org.domain.read",
  "org.domain.write",
  "user.read",
  "user.write",
  "user.delete",
  "user.credential.write",
  "member.read",
  "member.write",
  "member.delete",
  "idp.read",
  "idp.write",
  "idp.delete",
  "project.read",
  "project.write",
  "project.delete",
  "project.app.read",
  "project.app.write",
  "project.app.delete",
  "project.grant.read",
  "project.grant.write",
  "project.grant.delete",
  "user.grant.read",
  "user.grant.write",
  "user.grant.delete",
  "settings.write",
  "events.read",
];
const ORG_OWNER_VIEWER = [
  "org.read",
  "org.domain.read",
  "user.read",
  "member.read",
  "idp.read",
  "project.read",
  "project.app.read",
  "project.grant.read",
  "user.grant.read",
  "events.read",
];
/** What IAM_OWNER has at least, besides all of ORG_OWNER's. */
const IAM_OWNER_ALSO = [
  "instance.read",
  "instance.write",
  "org.delete",
  "action.target.read",
  "action.target.write",
  "action.target.delete",
  "action.execution.write",
  "action.execution.delete",
  "execution.read",
  "feature.read",
  "feature.write",
];
const SYSTEM_ONLY = ["system.instance.read", "system.instance.write", "system.instance.delete"];

const byName = (m: Msg): Record<string, string[]> => Object.fromEntries((m.roles as Msg[]).map((r) => [r.name, r.permissions ?? []]));

describe.each(DATABASE_KINDS)("ListAvailableRoles (%s)", (kind) => {
  let server: TestServer;
  let a: { id: string; primary: string };
  let b: { id: string; primary: string };
  let other: Awaited<ReturnType<TestServer["createInstance"]>>;
  let plain: string;
  let ownerA: string;
  let iamOwner: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    a = await createOrg(server, "Roles A");
    b = await createOrg(server, "Roles B");
    other = await server.createInstance("roles-other.example");
    plain = (await server.createUser({})).token;
    ownerA = (await server.createUser({ roles: [{ context: "org", contextId: a.id, roles: ["ORG_OWNER"] }] })).token;
    iamOwner = (await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] })).token;
  });
  afterAll(() => server?.close());

  it.each(PROTOCOLS)("lists the roles of each kind of context with their permissions, over %s", async (protocol) => {
    const list = async (token: string, ctx?: JsonObject) =>
      byName(ok(await caller(server, token, protocol)(MEMBERS, "ListAvailableRoles", ctx ? { ctx } : {})));

    const system = await list(server.adminToken, { system: true });
    expect(Object.keys(system)).toEqual(["SYSTEM_OWNER"]);
    expect(system.SYSTEM_OWNER).toEqual(expect.arrayContaining([...SYSTEM_ONLY, ...IAM_OWNER_ALSO, ...ORG_OWNER]));
    expect(new Set(system.SYSTEM_OWNER).size, "no permission twice").toBe(system.SYSTEM_OWNER!.length);

    for (const ctx of [undefined, { instanceId: server.instanceId }, { instanceDomain: "localhost" }] as (JsonObject | undefined)[]) {
      const instance = await list(plain, ctx);
      expect(Object.keys(instance).sort(), JSON.stringify(ctx)).toEqual(["IAM_OWNER", "IAM_OWNER_VIEWER", "LOGIN_CLIENT"]);
      expect(instance.IAM_OWNER).toEqual(expect.arrayContaining([...IAM_OWNER_ALSO, ...ORG_OWNER]));
      expect(
        instance.IAM_OWNER!.filter((p) => p.startsWith("system.")),
        "no system permission in an instance",
      ).toEqual([]);
      expect([...instance.IAM_OWNER_VIEWER!].sort(), "the viewer: the reads of IAM_OWNER").toEqual(
        instance.IAM_OWNER!.filter((p) => p.endsWith(".read")).sort(),
      );
      expect(instance.IAM_OWNER_VIEWER).toEqual(
        expect.arrayContaining(["instance.read", "org.read", "user.read", "member.read", "action.target.read", "execution.read"]),
      );
      // The instance's roles agree with the system's: SYSTEM_OWNER is IAM_OWNER and the system permissions.
      expect([...system.SYSTEM_OWNER!].sort()).toEqual([...instance.IAM_OWNER!, ...SYSTEM_ONLY].sort());
    }

    for (const ctx of [{ orgId: a.id }, { orgDomain: a.primary }, { orgDomain: a.primary.toUpperCase() }] as JsonObject[]) {
      const org = await list(plain, ctx);
      expect(Object.keys(org).sort(), JSON.stringify(ctx)).toEqual(["ORG_OWNER", "ORG_OWNER_VIEWER"]);
      expect([...org.ORG_OWNER!].sort()).toEqual([...ORG_OWNER].sort());
      expect([...org.ORG_OWNER_VIEWER!].sort()).toEqual([...ORG_OWNER_VIEWER].sort());
      expect(org.ORG_OWNER).toContain("org.write");
      expect(org.ORG_OWNER).not.toContain("org.delete");
      expect(org.ORG_OWNER).not.toContain("instance.write");
      expect(org.ORG_OWNER_VIEWER).not.toContain("member.write");
    }
    // Any authenticated caller, in any organization of its instance: an ORG_OWNER of A in B too.
    expect(Object.keys(await list(ownerA, { orgId: b.id })).sort()).toEqual(["ORG_OWNER", "ORG_OWNER_VIEWER"]);
    expect(Object.keys(await list(ownerA)).sort()).toEqual(["IAM_OWNER", "IAM_OWNER_VIEWER", "LOGIN_CLIENT"]);
    // A system member names another instance.
    expect(Object.keys(await list(server.adminToken, { instanceId: other.instanceId })).sort()).toEqual(["IAM_OWNER", "IAM_OWNER_VIEWER", "LOGIN_CLIENT"]);
  });

  it.each(PROTOCOLS)("ListMyPermissions answers the caller's own permissions in the context, over %s", async (protocol) => {
    const mine = async (token: string, ctx?: JsonObject) => ok(await caller(server, token, protocol)(MEMBERS, "ListMyPermissions", ctx ? { ctx } : {}));
    // An ORG_OWNER of A: ORG_OWNER's permissions in A, none in B or in the instance itself; A among its organizations.
    expect(await mine(ownerA, { orgId: a.id })).toMatchObject({ permissions: [...ORG_OWNER].sort(), orgIds: [a.id] });
    expect((await mine(ownerA, { orgId: b.id })).permissions ?? []).toEqual([]);
    expect((await mine(ownerA)).permissions ?? []).toEqual([]);
    // An IAM_OWNER holds its permissions in the instance and in every organization of it.
    const instance = (await mine(iamOwner)).permissions as string[];
    expect(instance).toEqual(expect.arrayContaining([...IAM_OWNER_ALSO, ...ORG_OWNER]));
    expect((await mine(iamOwner, { orgId: b.id })).permissions).toEqual(instance);
    expect((await mine(iamOwner)).systemMember ?? false).toBe(false);
    // A plain user holds nothing; the bootstrapped admin is a system member, with the system's permissions there.
    expect((await mine(plain)).permissions ?? []).toEqual([]);
    const admin = await mine(server.adminToken, { system: true });
    expect(admin.systemMember).toBe(true);
    expect(admin.permissions).toEqual(expect.arrayContaining(SYSTEM_ONLY));
  });

  it.each(PROTOCOLS)("refuses what the caller may not name, over %s", async (protocol) => {
    const call = (token: string, req: JsonObject) => caller(server, token, protocol)(MEMBERS, "ListAvailableRoles", req);
    const cases: [string, string, JsonObject, Code, number][] = [
      ["no token", "", {}, Code.Unauthenticated, 401],
      ["an unknown token", "x".repeat(43), {}, Code.Unauthenticated, 401],
      ["plain in the system", plain, { ctx: { system: true } }, Code.PermissionDenied, 403],
      ["an IAM_OWNER in the system", iamOwner, { ctx: { system: true } }, Code.PermissionDenied, 403],
      ["an ORG_OWNER in the system", ownerA, { ctx: { system: true } }, Code.PermissionDenied, 403],
      ["plain in no organization", plain, { ctx: { orgId: "no-such-org" } }, Code.NotFound, 404],
      ["plain in no organization's domain", plain, { ctx: { orgDomain: "no-such.example" } }, Code.NotFound, 404],
      ["an IAM_OWNER in another instance", iamOwner, { ctx: { instanceId: other.instanceId } }, Code.NotFound, 404],
      ["an IAM_OWNER in another instance's domain", iamOwner, { ctx: { instanceDomain: "roles-other.example" } }, Code.NotFound, 404],
      ["the admin in another instance's organization", server.adminToken, { ctx: { orgId: other.orgId } }, Code.NotFound, 404],
    ];
    for (const [what, token, req, code, status] of cases) {
      const r = await call(token, req);
      expect(r, what).toMatchObject({ ok: false, code });
      if (protocol === "rest") expect(r.httpStatus, what).toBe(status);
    }
  });
});
