import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { caller, createOrg, MEMBERS, must, ORGS, outcome, USERS, type Msg } from "./helpers.js";

/**
 * Memberships under concurrent writes. PGlite runs one transaction at a time, so there these
 * tests only state the rules; PostgreSQL runs the calls truly at once.
 */
describe.each(DATABASE_KINDS)("memberships under concurrent calls (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());
  const admin = () => caller(server, server.adminToken);

  it("of several creations of one membership at once, exactly one succeeds; the others are AlreadyExists", async () => {
    for (let round = 0; round < 5; round++) {
      const x = (await server.createUser({})).userId;
      const results = await Promise.all(
        Array.from({ length: 6 }, () => admin()(MEMBERS, "CreateMembership", { membership: { userId: x, roles: ["IAM_OWNER_VIEWER"] } })),
      );
      expect(results.map(outcome).sort()).toEqual(["AlreadyExists", "AlreadyExists", "AlreadyExists", "AlreadyExists", "AlreadyExists", "ok"]);
      const deleted = await Promise.all(Array.from({ length: 3 }, () => admin()(MEMBERS, "DeleteMembership", { userId: x })));
      expect(deleted.map(outcome).sort()).toEqual(["NotFound", "NotFound", "ok"]);
    }
  });

  it("patches at once are applied one after the other: the last sequence holds the roles that stay", async () => {
    const x = (await server.createUser({})).userId;
    await must(admin()(MEMBERS, "CreateMembership", { membership: { userId: x, roles: ["IAM_OWNER_VIEWER"] } }), "create");
    const wanted = [["IAM_OWNER"], ["IAM_OWNER", "IAM_OWNER_VIEWER"], ["IAM_OWNER_VIEWER"], ["IAM_OWNER"]];
    const results = await Promise.all(wanted.map((roles) => admin()(MEMBERS, "PatchMembership", { userId: x, membership: { roles } })));
    expect(results.map(outcome)).toEqual(["ok", "ok", "ok", "ok"]);
    const sequences = results.map((r) => Number((r as { message: Msg }).message.details.sequence));
    const last = wanted[sequences.indexOf(Math.max(...sequences))]!;
    const found = await must(admin()(MEMBERS, "SearchMemberships", { filters: [{ user: { userId: x } }] }), "search");
    expect(found.result).toHaveLength(1);
    expect(found.result[0].roles).toEqual(last);
    expect(Number(found.result[0].details.sequence)).toBe(Math.max(...sequences));
  });

  // CreateMembership share-locks the user and the organization; DeleteUser and
  // DeleteOrganization lock them for update first. Whatever the order, no membership may
  // outlive its user or its organization (PostgreSQL runs these concurrently).
  it("a membership created while its user is deleted does not outlive the user", async () => {
    const dangling: string[] = [];
    for (let round = 0; round < 20; round++) {
      const x = (await server.createUser({})).userId;
      await Promise.all([
        admin()(MEMBERS, "CreateMembership", { membership: { userId: x, roles: ["IAM_OWNER_VIEWER"] } }),
        admin()(USERS, "DeleteUser", { id: x }),
      ]);
      const left = await must(admin()(MEMBERS, "SearchMemberships", { filters: [{ user: { userId: x } }] }), "search");
      if ((left.result ?? []).length > 0) dangling.push(x);
      expect(await admin()(USERS, "GetUser", { id: x }), "the user is gone").toMatchObject({ ok: false });
    }
    expect(dangling, "memberships of deleted users").toEqual([]);
  });

  it("a membership created while its organization is deleted does not outlive the organization", async () => {
    const dangling: string[] = [];
    for (let round = 0; round < 20; round++) {
      const org = await createOrg(server, `Race ${round}`);
      const y = (await server.createUser({})).userId;
      await Promise.all([
        admin()(MEMBERS, "CreateMembership", { membership: { userId: y, roles: ["ORG_OWNER"] }, ctx: { orgId: org.id } }),
        admin()(ORGS, "DeleteOrganization", { id: org.id }),
      ]);
      const left = await must(admin()(MEMBERS, "SearchMemberships", { filters: [{ context: { id: org.id } }] }), "search");
      if ((left.result ?? []).length > 0) dangling.push(org.id);
      expect(await admin()(ORGS, "GetOrganization", { id: org.id }), "the organization is gone").toMatchObject({ ok: false });
    }
    expect(dangling, "memberships in deleted organizations").toEqual([]);
  });
});
