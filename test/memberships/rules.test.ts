import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { adminUserId, caller, createOrg, HTTP, keysOf, MEMBERS, must, ok, ORGS, outcome, rolesOf, USERS } from "./helpers.js";

/**
 * The rules of memberships (docs/api.md, Memberships and Authentication and authorization):
 * who may grant and take away which roles where, when granted roles count, what is NotFound,
 * and what goes with deleted users and organizations. Expected outcomes are written by hand.
 */

type Who = "admin" | "iamOwner" | "iamViewer" | "ownerA" | "viewerA" | "plain";
/** ok, or the code's name. */
type Expect = "ok" | "InvalidArgument" | "PermissionDenied" | "NotFound";
const [OK, IA, PD] = ["ok", "InvalidArgument", "PermissionDenied"] as const;

/** Grants: who, in which ctx ("none": absent; "A", "B": ctx.orgId; "system": ctx.system), which roles, and the outcome. */
const GRANTS: [Who, "none" | "A" | "B" | "system", string[], Expect][] = [
  ["admin", "system", ["SYSTEM_OWNER"], OK],
  ["admin", "none", ["IAM_OWNER"], OK],
  ["admin", "B", ["ORG_OWNER"], OK],
  ["iamOwner", "none", ["IAM_OWNER"], OK],
  ["iamOwner", "none", ["IAM_OWNER_VIEWER"], OK],
  ["iamOwner", "A", ["ORG_OWNER"], OK],
  ["iamOwner", "B", ["ORG_OWNER_VIEWER"], OK],
  // Only system members grant system roles; the system context itself is theirs only.
  ["iamOwner", "system", ["SYSTEM_OWNER"], PD],
  // Roles that do not fit the context, or do not exist.
  ["iamOwner", "none", ["SYSTEM_OWNER"], IA],
  ["iamOwner", "none", ["ORG_OWNER"], IA],
  ["iamOwner", "A", ["IAM_OWNER"], IA],
  ["iamOwner", "A", ["SYSTEM_OWNER"], IA],
  ["iamOwner", "none", ["NOPE"], IA],
  ["iamOwner", "none", ["iam_owner"], IA],
  ["admin", "system", ["IAM_OWNER"], IA],
  ["admin", "system", ["ORG_OWNER"], IA],
  // An ORG_OWNER grants in its organization only.
  ["ownerA", "A", ["ORG_OWNER"], OK],
  ["ownerA", "A", ["ORG_OWNER_VIEWER"], OK],
  ["ownerA", "A", ["ORG_OWNER", "ORG_OWNER_VIEWER"], OK],
  ["ownerA", "B", ["ORG_OWNER"], PD],
  ["ownerA", "B", ["ORG_OWNER_VIEWER"], PD],
  ["ownerA", "none", ["IAM_OWNER"], PD],
  ["ownerA", "none", ["IAM_OWNER_VIEWER"], PD],
  ["ownerA", "system", ["SYSTEM_OWNER"], PD],
  ["ownerA", "A", ["IAM_OWNER"], IA],
  // Readers grant nothing.
  ["viewerA", "A", ["ORG_OWNER_VIEWER"], PD],
  ["iamViewer", "none", ["IAM_OWNER_VIEWER"], PD],
  ["iamViewer", "A", ["ORG_OWNER_VIEWER"], PD],
  ["plain", "none", ["IAM_OWNER_VIEWER"], PD],
  ["plain", "A", ["ORG_OWNER_VIEWER"], PD],
];

describe.each(DATABASE_KINDS)("membership rules (%s)", (kind) => {
  let server: TestServer;
  let a: { id: string; primary: string };
  let b: { id: string; primary: string };
  let other: Awaited<ReturnType<TestServer["createInstance"]>>;
  let adminId: string;
  const tokens = {} as Record<Who, string>;

  beforeAll(async () => {
    server = await startTestServer(kind);
    a = await createOrg(server, "Rules A");
    b = await createOrg(server, "Rules B");
    other = await server.createInstance("rules-other.example");
    adminId = await adminUserId(server);
    const user = async (roles: Parameters<TestServer["createUser"]>[0]["roles"]) => (await server.createUser({ roles })).token;
    tokens.admin = server.adminToken;
    tokens.iamOwner = await user([{ context: "instance", roles: ["IAM_OWNER"] }]);
    tokens.iamViewer = await user([{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }]);
    tokens.ownerA = await user([{ context: "org", contextId: a.id, roles: ["ORG_OWNER"] }]);
    tokens.viewerA = await user([{ context: "org", contextId: a.id, roles: ["ORG_OWNER_VIEWER"] }]);
    tokens.plain = await user([]);
  });
  afterAll(() => server?.close());

  const ctxOf = (where: "none" | "A" | "B" | "system"): JsonObject | undefined =>
    where === "none" ? undefined : where === "system" ? { system: true } : { orgId: where === "A" ? a.id : b.id };
  const as = (who: Who, protocol: Protocol = "grpc") => caller(server, tokens[who], protocol);

  it.each(PROTOCOLS)(
    "grants follow mayGrant: member.write where the membership is, system roles by system members only, roles of the context only, over %s",
    async (protocol) => {
      const problems: string[] = [];
      for (const [who, where, roles, expected] of GRANTS) {
        const target = (await server.createUser({})).userId;
        const ctx = ctxOf(where);
        const result = await as(who, protocol)(MEMBERS, "CreateMembership", { membership: { userId: target, roles }, ...(ctx && { ctx }) });
        const label = `${who} grants ${roles.join("+")} in ${where}`;
        if (outcome(result) !== expected) problems.push(`${label}: expected ${expected}, saw ${outcome(result)} ${result.ok ? "" : result.message}`);
        if (result.httpStatus !== undefined && result.httpStatus !== (expected === OK ? 201 : HTTP[expected]))
          problems.push(`${label}: HTTP ${result.httpStatus}`);
        // Only what succeeded exists.
        const stored = await rolesOf(server, target, ctx);
        if (JSON.stringify(stored) !== JSON.stringify(expected === OK ? roles : undefined)) problems.push(`${label}: stored ${JSON.stringify(stored)}`);
      }
      expect(problems).toEqual([]);
    },
  );

  it.each(PROTOCOLS)("taking roles away needs the same as granting them, over %s", async (protocol) => {
    const problems: string[] = [];
    const check = async (label: string, result: Awaited<ReturnType<ReturnType<typeof as>>>, expected: Expect) => {
      if (outcome(result) !== expected) problems.push(`${label}: expected ${expected}, saw ${outcome(result)} ${result.ok ? "" : result.message}`);
    };
    // The bootstrap admin's system membership is beyond an IAM_OWNER's reach, by patch and delete.
    await check(
      "iamOwner deletes the admin's SYSTEM_OWNER",
      await as("iamOwner", protocol)(MEMBERS, "DeleteMembership", { userId: adminId, ctx: { system: true } }),
      PD,
    );
    await check(
      "iamOwner patches the admin's SYSTEM_OWNER",
      await as("iamOwner", protocol)(MEMBERS, "PatchMembership", { userId: adminId, membership: { roles: ["SYSTEM_OWNER"] }, ctx: { system: true } }),
      PD,
    );
    await check(
      "ownerA deletes the admin's SYSTEM_OWNER",
      await as("ownerA", protocol)(MEMBERS, "DeleteMembership", { userId: adminId, ctx: { system: true } }),
      PD,
    );
    await check("ownerA deletes the admin's IAM_OWNER", await as("ownerA", protocol)(MEMBERS, "DeleteMembership", { userId: adminId }), PD);
    await check(
      "ownerA patches the admin's IAM_OWNER",
      await as("ownerA", protocol)(MEMBERS, "PatchMembership", { userId: adminId, membership: { roles: ["IAM_OWNER_VIEWER"] } }),
      PD,
    );
    await check("iamViewer deletes the admin's IAM_OWNER", await as("iamViewer", protocol)(MEMBERS, "DeleteMembership", { userId: adminId }), PD);
    expect(await rolesOf(server, adminId, { system: true })).toEqual(["SYSTEM_OWNER"]);
    expect(await rolesOf(server, adminId)).toEqual(["IAM_OWNER"]);

    // Memberships in A and B, made by the admin.
    const inA = (await server.createUser({})).userId;
    const inB = (await server.createUser({})).userId;
    const inInstance = (await server.createUser({})).userId;
    const admin = as("admin");
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: inA, roles: ["ORG_OWNER_VIEWER"] }, ctx: { orgId: a.id } }), "admin grants in A");
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: inB, roles: ["ORG_OWNER_VIEWER"] }, ctx: { orgId: b.id } }), "admin grants in B");
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: inInstance, roles: ["IAM_OWNER_VIEWER"] } }), "admin grants in the instance");

    const ownerA = as("ownerA", protocol);
    await check(
      "ownerA patches in B",
      await ownerA(MEMBERS, "PatchMembership", { userId: inB, membership: { roles: ["ORG_OWNER"] }, ctx: { orgId: b.id } }),
      PD,
    );
    await check("ownerA deletes in B", await ownerA(MEMBERS, "DeleteMembership", { userId: inB, ctx: { orgId: b.id } }), PD);
    await check("ownerA patches in the instance", await ownerA(MEMBERS, "PatchMembership", { userId: inInstance, membership: { roles: ["IAM_OWNER"] } }), PD);
    await check("ownerA deletes in the instance", await ownerA(MEMBERS, "DeleteMembership", { userId: inInstance }), PD);
    await check(
      "viewerA patches in A",
      await as("viewerA", protocol)(MEMBERS, "PatchMembership", { userId: inA, membership: { roles: ["ORG_OWNER"] }, ctx: { orgId: a.id } }),
      PD,
    );
    await check("viewerA deletes in A", await as("viewerA", protocol)(MEMBERS, "DeleteMembership", { userId: inA, ctx: { orgId: a.id } }), PD);
    await check(
      "ownerA patches in A to an instance role",
      await ownerA(MEMBERS, "PatchMembership", { userId: inA, membership: { roles: ["ORG_OWNER", "IAM_OWNER"] }, ctx: { orgId: a.id } }),
      IA,
    );
    expect(await rolesOf(server, inA, { orgId: a.id })).toEqual(["ORG_OWNER_VIEWER"]);
    expect(await rolesOf(server, inB, { orgId: b.id })).toEqual(["ORG_OWNER_VIEWER"]);
    expect(await rolesOf(server, inInstance)).toEqual(["IAM_OWNER_VIEWER"]);

    await check(
      "ownerA patches in A",
      await ownerA(MEMBERS, "PatchMembership", { userId: inA, membership: { roles: ["ORG_OWNER"] }, ctx: { orgId: a.id } }),
      OK,
    );
    expect(await rolesOf(server, inA, { orgId: a.id })).toEqual(["ORG_OWNER"]);
    await check("ownerA deletes in A", await ownerA(MEMBERS, "DeleteMembership", { userId: inA, ctx: { orgDomain: a.primary } }), OK);
    expect(await rolesOf(server, inA, { orgId: a.id })).toBeUndefined();

    // A second system member may take a system role away; an IAM_OWNER may take instance roles.
    const sys = await server.createUser({ roles: [{ context: "system", roles: ["SYSTEM_OWNER"] }] });
    const victim = (await server.createUser({ roles: [{ context: "system", roles: ["SYSTEM_OWNER"] }] })).userId;
    await check("iamOwner deletes a SYSTEM_OWNER", await as("iamOwner", protocol)(MEMBERS, "DeleteMembership", { userId: victim, ctx: { system: true } }), PD);
    await check(
      "a system member deletes a SYSTEM_OWNER",
      await caller(server, sys.token, protocol)(MEMBERS, "DeleteMembership", { userId: victim, ctx: { system: true } }),
      OK,
    );
    expect(await rolesOf(server, victim, { system: true })).toBeUndefined();
    await check("iamOwner deletes an instance membership", await as("iamOwner", protocol)(MEMBERS, "DeleteMembership", { userId: inInstance }), OK);
    expect(await rolesOf(server, inInstance)).toBeUndefined();
    expect(problems).toEqual([]);
  });

  it.each(PROTOCOLS)("granted roles count from the grantee's very next call, revoked ones stop at once, over %s", async (protocol) => {
    const admin = as("admin");
    const fresh = await server.createUser({});
    const me = caller(server, fresh.token, protocol);
    const code = async (p: ReturnType<typeof me>) => outcome(await p);

    // Instance: read, then write, then nothing.
    expect(await code(me(USERS, "SearchUsers", {})), "before any grant (fills the cache)").toBe(PD);
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: fresh.userId, roles: ["IAM_OWNER_VIEWER"] } }), "grant IAM_OWNER_VIEWER");
    expect(await code(me(USERS, "SearchUsers", {})), "IAM_OWNER_VIEWER granted").toBe(OK);
    expect(await code(me(ORGS, "CreateOrganization", { organization: { name: `Rules grant ${protocol}` } })), "a viewer creates nothing").toBe(PD);
    await must(admin(MEMBERS, "PatchMembership", { userId: fresh.userId, membership: { roles: ["IAM_OWNER"] } }), "patch to IAM_OWNER");
    expect(await code(me(ORGS, "CreateOrganization", { organization: { name: `Rules grant ${protocol}` } })), "patched to IAM_OWNER").toBe(OK);
    await must(admin(MEMBERS, "PatchMembership", { userId: fresh.userId, membership: { roles: ["IAM_OWNER_VIEWER"] } }), "patch back to IAM_OWNER_VIEWER");
    expect(await code(me(ORGS, "CreateOrganization", { organization: { name: `Rules grant 2 ${protocol}` } })), "patched back").toBe(PD);
    await must(admin(MEMBERS, "DeleteMembership", { userId: fresh.userId }), "revoke");
    expect(await code(me(USERS, "SearchUsers", {})), "revoked").toBe(PD);

    // Organization: granted in A, gone with A's deletion.
    const c = await createOrg(server, `Rules C ${protocol}`);
    expect(await code(me(USERS, "SearchUsers", { ctx: { orgId: c.id } })), "before the grant in C").toBe(PD);
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: fresh.userId, roles: ["ORG_OWNER"] }, ctx: { orgId: c.id } }), "grant in C");
    expect(await code(me(USERS, "SearchUsers", { ctx: { orgId: c.id } })), "ORG_OWNER in C").toBe(OK);
    expect(await code(me(ORGS, "GetOrganization", { id: c.id })), "ORG_OWNER reads C").toBe(OK);
    await must(admin(ORGS, "DeleteOrganization", { id: c.id }), "delete C");
    expect(await code(me(USERS, "SearchUsers", {})), "C deleted: nothing left to read").toBe(PD);

    // System: granted, used through ctx.system, revoked.
    expect(await code(me(MEMBERS, "ListAvailableRoles", { ctx: { system: true } })), "before the system grant").toBe(PD);
    await must(
      admin(MEMBERS, "CreateMembership", { membership: { userId: fresh.userId, roles: ["SYSTEM_OWNER"] }, ctx: { system: true } }),
      "grant SYSTEM_OWNER",
    );
    expect(await code(me(MEMBERS, "ListAvailableRoles", { ctx: { system: true } })), "SYSTEM_OWNER granted").toBe(OK);
    expect(await code(me(MEMBERS, "SearchMemberships", { ctx: { instanceId: other.instanceId } })), "SYSTEM_OWNER reaches another instance").toBe(OK);
    await must(admin(MEMBERS, "DeleteMembership", { userId: fresh.userId, ctx: { system: true } }), "revoke SYSTEM_OWNER");
    expect(await code(me(MEMBERS, "ListAvailableRoles", { ctx: { system: true } })), "SYSTEM_OWNER revoked").toBe(PD);
    expect(await code(me(MEMBERS, "SearchMemberships", { ctx: { instanceId: other.instanceId } })), "another instance, revoked").toBe("NotFound");
  });

  it.each(PROTOCOLS)("users that are not of the instance, and memberships that are not there, are NotFound, over %s", async (protocol) => {
    const admin = as("admin", protocol);
    const otherUser = (await server.createUser({ instanceId: other.instanceId })).userId;
    const nf: [string, Awaited<ReturnType<typeof admin>>][] = [
      ["create for a user of another instance", await admin(MEMBERS, "CreateMembership", { membership: { userId: otherUser, roles: ["IAM_OWNER"] } })],
      [
        "create for a user of another instance in A",
        await admin(MEMBERS, "CreateMembership", { membership: { userId: otherUser, roles: ["ORG_OWNER"] }, ctx: { orgId: a.id } }),
      ],
      [
        "create in the system for no user of any instance",
        await admin(MEMBERS, "CreateMembership", {
          membership: { userId: "01a20000-0000-7000-8000-00000000beef", roles: ["SYSTEM_OWNER"] },
          ctx: { system: true },
        }),
      ],
      [
        "create for no user",
        await admin(MEMBERS, "CreateMembership", { membership: { userId: "01a20000-0000-7000-8000-00000000dead", roles: ["IAM_OWNER"] } }),
      ],
      [
        "ownerA creates for no user in A",
        await as("ownerA", protocol)(MEMBERS, "CreateMembership", { membership: { userId: "no-such-user", roles: ["ORG_OWNER"] }, ctx: { orgId: a.id } }),
      ],
      ["patch of another instance's admin", await admin(MEMBERS, "PatchMembership", { userId: otherUser, membership: { roles: ["IAM_OWNER"] } })],
      ["delete of another instance's user", await admin(MEMBERS, "DeleteMembership", { userId: otherUser })],
      [
        "patch of a user without membership in A",
        await admin(MEMBERS, "PatchMembership", { userId: adminId, membership: { roles: ["ORG_OWNER"] }, ctx: { orgId: a.id } }),
      ],
      ["delete of a user without membership in A", await as("ownerA", protocol)(MEMBERS, "DeleteMembership", { userId: adminId, ctx: { orgId: a.id } })],
      [
        "create in an organization that does not exist",
        await admin(MEMBERS, "CreateMembership", { membership: { userId: adminId, roles: ["ORG_OWNER"] }, ctx: { orgId: "no-such-org" } }),
      ],
      [
        "create in an instance that does not exist",
        await admin(MEMBERS, "CreateMembership", { membership: { userId: adminId, roles: ["IAM_OWNER"] }, ctx: { instanceId: "no-such-instance" } }),
      ],
    ];
    const problems = nf
      .filter(([, r]) => outcome(r) !== "NotFound" || (r.httpStatus !== undefined && r.httpStatus !== 404))
      .map(([what, r]) => `${what}: ${JSON.stringify(r)}`);
    expect(problems).toEqual([]);
    // Nothing was created for the other instance's user, on either instance.
    const onOther = await must(
      as("admin")(MEMBERS, "SearchMemberships", { ctx: { instanceId: other.instanceId } }),
      "a system member searches the other instance",
    );
    expect(keysOf(onOther), "the other instance's own admin is there").toHaveLength(1);
    expect(keysOf(onOther).filter((k) => k.startsWith(otherUser))).toEqual([]);
  });

  it("a system member grants system roles to users of any instance: the system spans them all", async () => {
    const admin = as("admin");
    const theirs = (await server.createUser({ instanceId: other.instanceId })).userId;
    const made = await admin(MEMBERS, "CreateMembership", { membership: { userId: theirs, roles: ["SYSTEM_OWNER"] }, ctx: { system: true } });
    expect(ok(made).details).toMatchObject({ id: theirs, resourceOwner: { type: "OWNER_TYPE_SYSTEM" } });
    const listed = await must(
      admin(MEMBERS, "SearchMemberships", { ctx: { system: true }, filters: [{ user: { userId: theirs } }] }),
      "the system's memberships",
    );
    expect(keysOf(listed)).toHaveLength(1);
    expect(outcome(await admin(MEMBERS, "DeleteMembership", { userId: theirs, ctx: { system: true } }))).toBe("ok");
  });

  it.each(PROTOCOLS)("a system member grants in another instance through ctx.instanceId, for that instance's users only, over %s", async (protocol) => {
    const admin = as("admin", protocol);
    const theirs = (await server.createUser({ instanceId: other.instanceId })).userId;
    const ours = (await server.createUser({})).userId;
    const there = { instanceId: other.instanceId };
    const made = await admin(MEMBERS, "CreateMembership", { membership: { userId: theirs, roles: ["IAM_OWNER_VIEWER"] }, ctx: there });
    expect(ok(made).details).toMatchObject({ id: theirs, sequence: "1", resourceOwner: { type: "OWNER_TYPE_INSTANCE", id: other.instanceId } });
    expect(
      await admin(MEMBERS, "CreateMembership", { membership: { userId: ours, roles: ["IAM_OWNER_VIEWER"] }, ctx: there }),
      "a user of A in B",
    ).toMatchObject({ ok: false, code: Code.NotFound });
    expect(
      await admin(MEMBERS, "CreateMembership", { membership: { userId: theirs, roles: ["ORG_OWNER"] }, ctx: there }),
      "an organization role in B",
    ).toMatchObject({ ok: false, code: Code.InvalidArgument });
    const seen = ok(await admin(MEMBERS, "SearchMemberships", { ctx: there, filters: [{ user: { userId: theirs } }] }));
    expect(keysOf(seen)).toEqual([`${theirs}/${other.instanceId}`]);
    expect(ok(await admin(MEMBERS, "SearchMemberships", { filters: [{ user: { userId: theirs } }] })).result ?? [], "not among A's").toEqual([]);
    expect(ok(await admin(MEMBERS, "PatchMembership", { userId: theirs, membership: { roles: ["IAM_OWNER"] }, ctx: there })).details).toMatchObject({
      sequence: "2",
    });
    expect(await admin(MEMBERS, "DeleteMembership", { userId: theirs }), "not in A").toMatchObject({ ok: false, code: Code.NotFound });
    expect(ok(await admin(MEMBERS, "DeleteMembership", { userId: theirs, ctx: there })).details).toMatchObject({
      sequence: "3",
      resourceOwner: { id: other.instanceId },
    });
    expect(ok(await admin(MEMBERS, "SearchMemberships", { ctx: there, filters: [{ user: { userId: theirs } }] })).result ?? []).toEqual([]);
  });

  // With ctx.system, SearchMemberships lists the system memberships of users of every
  // instance; Patch and Delete must reach each of them too.
  it("in the system context, Patch and Delete find the system memberships that SearchMemberships lists there", async () => {
    const admin = as("admin");
    const theirs = (await server.createUser({ instanceId: other.instanceId, roles: [{ context: "system", roles: ["SYSTEM_OWNER"] }] })).userId;
    const listed = ok(await admin(MEMBERS, "SearchMemberships", { ctx: { system: true }, filters: [{ user: { userId: theirs } }] }));
    expect(keysOf(listed), "listed in the system").toEqual([`${theirs}/system`]);
    expect(outcome(await admin(MEMBERS, "PatchMembership", { userId: theirs, membership: { roles: ["SYSTEM_OWNER"] }, ctx: { system: true } })), "patch").toBe(
      OK,
    );
    expect(outcome(await admin(MEMBERS, "DeleteMembership", { userId: theirs, ctx: { system: true } })), "delete").toBe(OK);
    expect(ok(await admin(MEMBERS, "SearchMemberships", { ctx: { system: true }, filters: [{ user: { userId: theirs } }] })).result ?? []).toEqual([]);
  });

  it("deleting a user removes its memberships everywhere; deleting an organization removes the memberships in it", async () => {
    const admin = as("admin");
    const find = async (userId: string, ctx?: JsonObject) =>
      keysOf(await must(admin(MEMBERS, "SearchMemberships", { filters: [{ user: { userId } }], ...(ctx && { ctx }) }), "search"));
    const x = (await server.createUser({})).userId;
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: x, roles: ["IAM_OWNER_VIEWER"] } }), "x in the instance");
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: x, roles: ["ORG_OWNER"] }, ctx: { orgId: a.id } }), "x in A");
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: x, roles: ["SYSTEM_OWNER"] }, ctx: { system: true } }), "x in the system");
    expect((await find(x)).sort()).toEqual([`${x}/${a.id}`, `${x}/${server.instanceId}`].sort());
    expect(await find(x, { system: true })).toEqual([`${x}/system`]);
    ok(await admin(USERS, "DeleteUser", { id: x }));
    expect(await find(x)).toEqual([]);
    expect(await find(x, { system: true })).toEqual([]);
    expect(await admin(MEMBERS, "CreateMembership", { membership: { userId: x, roles: ["IAM_OWNER"] } })).toMatchObject({ ok: false, code: Code.NotFound });

    // An organization with members from elsewhere, and a user of its own with an instance membership.
    const d = await createOrg(server, "Rules D");
    const outsider = (await server.createUser({})).userId;
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: outsider, roles: ["ORG_OWNER"] }, ctx: { orgId: d.id } }), "outsider in D");
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: outsider, roles: ["IAM_OWNER_VIEWER"] } }), "outsider in the instance");
    const insider = String(
      (await must(admin(USERS, "CreateUser", { user: { username: "rules-insider", machine: { name: "insider" } }, ctx: { orgId: d.id } }), "insider")).details
        .id,
    );
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: insider, roles: ["IAM_OWNER_VIEWER"] } }), "insider in the instance");
    await must(admin(MEMBERS, "CreateMembership", { membership: { userId: insider, roles: ["ORG_OWNER_VIEWER"] }, ctx: { orgId: a.id } }), "insider in A");
    const inD = async () => keysOf(await must(admin(MEMBERS, "SearchMemberships", { filters: [{ context: { id: d.id } }] }), "search D"));
    expect(await inD()).toEqual([`${outsider}/${d.id}`]);
    ok(await admin(ORGS, "DeleteOrganization", { id: d.id }));
    expect(await inD()).toEqual([]);
    expect(await find(outsider), "the outsider keeps its other memberships").toEqual([`${outsider}/${server.instanceId}`]);
    expect(await find(insider), "the insider went with D, with its memberships").toEqual([]);
  });
});
