import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { adminUserId, caller, createOrg, keysOf, MEMBERS, must, sleep, totalOf, withoutBootstrapPerson, type Msg } from "./helpers.js";

/**
 * SearchMemberships over a fixture whose every membership is known, written out below in
 * the order of creation (t0 … t8), with one later change (u5's, at t9):
 *
 *   admin  I       IAM_OWNER                      t0 (bootstrap)     admin  system  SYSTEM_OWNER  t0
 *   u1     A       ORG_OWNER                      t1                 u6     system  SYSTEM_OWNER  t7
 *   u2     A       ORG_OWNER_VIEWER               t2                 x1     system  SYSTEM_OWNER  t8 (a user of instance X)
 *   u2     B       ORG_OWNER                      t3
 *   u3     B       ORG_OWNER_VIEWER, ORG_OWNER    t4
 *   u4     I       IAM_OWNER                      t5
 *   u5     I       IAM_OWNER → IAM_OWNER_VIEWER   t6, changed t9
 *
 * I is the Host's instance, A and B its organizations; plain has no membership. Rows are
 * written "<user>/<context>" with the context's name (I, A, B, system).
 */

type Name = "admin" | "u1" | "u2" | "u3" | "u4" | "u5" | "u6" | "x1" | "plain";

const INSTANCE_AND_ORGS_BY_CREATION = ["admin/I", "u1/A", "u2/A", "u2/B", "u3/B", "u4/I", "u5/I"];
const SYSTEM_BY_CREATION = ["admin/system", "u6/system", "x1/system"];
const desc = (rows: string[]) => [...rows].reverse();

describe.each(DATABASE_KINDS)("SearchMemberships (%s)", (kind) => {
  let server: TestServer;
  const ids = {} as Record<Name, string>;
  const tokens = {} as Record<Name, string>;
  /** id → name, for users and contexts. */
  const names = new Map<string, string>();
  let a: { id: string };
  let b: { id: string };

  beforeAll(async () => {
    server = await startTestServer(kind);
    await withoutBootstrapPerson(server);
    const x = await server.createInstance("search-x.example");
    a = await createOrg(server, "Search A");
    b = await createOrg(server, "Search B");
    ids.admin = await adminUserId(server);
    tokens.admin = server.adminToken;
    for (const name of ["u1", "u2", "u3", "u4", "u5", "u6", "plain"] as const) {
      const user = await server.createUser({});
      ids[name] = user.userId;
      tokens[name] = user.token;
    }

    const admin = caller(server, server.adminToken);
    const grant = async (who: Name, ctx: JsonObject | undefined, roles: string[]) => {
      // Creation dates are the events' times: a few milliseconds apart keep the order strict.
      await sleep(3);
      await must(admin(MEMBERS, "CreateMembership", { membership: { userId: ids[who], roles }, ...(ctx && { ctx }) }), `grant ${who}`);
    };
    await grant("u1", { orgId: a.id }, ["ORG_OWNER"]);
    await grant("u2", { orgId: a.id }, ["ORG_OWNER_VIEWER"]);
    await grant("u2", { orgId: b.id }, ["ORG_OWNER"]);
    await grant("u3", { orgId: b.id }, ["ORG_OWNER_VIEWER", "ORG_OWNER"]);
    await grant("u4", undefined, ["IAM_OWNER"]);
    await grant("u5", undefined, ["IAM_OWNER"]);
    await grant("u6", { system: true }, ["SYSTEM_OWNER"]);
    // x1 is of instance X: its system membership can only be made there (as the bootstrap does).
    await sleep(3);
    ids.x1 = (await server.createUser({ instanceId: x.instanceId, roles: [{ context: "system", roles: ["SYSTEM_OWNER"] }] })).userId;
    await sleep(3);
    await must(admin(MEMBERS, "PatchMembership", { userId: ids.u5, membership: { roles: ["IAM_OWNER_VIEWER"] } }), "patch u5");
  });
  afterAll(() => server?.close());
  beforeAll(() => {
    for (const [name, id] of Object.entries(ids)) names.set(id, name);
    names.set(server.instanceId, "I").set(a.id, "A").set(b.id, "B");
  });

  const search = async (who: Name, req: JsonObject, protocol: Protocol = "grpc") => caller(server, tokens[who], protocol)(MEMBERS, "SearchMemberships", req);
  const found = async (who: Name, req: JsonObject, protocol: Protocol = "grpc"): Promise<Msg> =>
    must(search(who, req, protocol), `${who} searches ${JSON.stringify(req)}`);
  const rows = (m: Msg) => keysOf(m, names);

  it("is the fixture it says it is", async () => {
    const all = await found("admin", { query: { asc: true } });
    expect(rows(all)).toEqual(INSTANCE_AND_ORGS_BY_CREATION);
    expect((all.result as Msg[]).map((r) => r.roles)).toEqual([
      ["IAM_OWNER"],
      ["ORG_OWNER"],
      ["ORG_OWNER_VIEWER"],
      ["ORG_OWNER"],
      ["ORG_OWNER_VIEWER", "ORG_OWNER"],
      ["IAM_OWNER"],
      ["IAM_OWNER_VIEWER"],
    ]);
  });

  it.each(PROTOCOLS)("sorts by creation date (default, descending), user id and change date, both ways, over %s", async (protocol) => {
    const byUser = [...INSTANCE_AND_ORGS_BY_CREATION].sort((p, q) => {
      const [pu, pc] = p.split("/");
      const [qu, qc] = q.split("/");
      // Ties of the user are broken by the context: A and B are organizations, their ids as made.
      return ids[pu as Name].localeCompare(ids[qu as Name]) || (pc === "A" ? a.id : b.id).localeCompare(qc === "A" ? a.id : b.id);
    });
    const byChange = [...INSTANCE_AND_ORGS_BY_CREATION.filter((r) => r !== "u5/I"), "u5/I"];
    const cases: [JsonObject, string[], string][] = [
      [{}, desc(INSTANCE_AND_ORGS_BY_CREATION), "MEMBERSHIP_FIELD_NAME_UNSPECIFIED"],
      [{ query: { asc: true } }, INSTANCE_AND_ORGS_BY_CREATION, "MEMBERSHIP_FIELD_NAME_UNSPECIFIED"],
      [{ sortingColumn: "MEMBERSHIP_FIELD_NAME_CREATION_DATE" }, desc(INSTANCE_AND_ORGS_BY_CREATION), "MEMBERSHIP_FIELD_NAME_CREATION_DATE"],
      [{ sortingColumn: "MEMBERSHIP_FIELD_NAME_CREATION_DATE", query: { asc: true } }, INSTANCE_AND_ORGS_BY_CREATION, "MEMBERSHIP_FIELD_NAME_CREATION_DATE"],
      [{ sortingColumn: "MEMBERSHIP_FIELD_NAME_USER_ID", query: { asc: true } }, byUser, "MEMBERSHIP_FIELD_NAME_USER_ID"],
      [{ sortingColumn: "MEMBERSHIP_FIELD_NAME_USER_ID" }, desc(byUser), "MEMBERSHIP_FIELD_NAME_USER_ID"],
      [{ sortingColumn: "MEMBERSHIP_FIELD_NAME_CHANGE_DATE", query: { asc: true } }, byChange, "MEMBERSHIP_FIELD_NAME_CHANGE_DATE"],
      [{ sortingColumn: "MEMBERSHIP_FIELD_NAME_CHANGE_DATE" }, desc(byChange), "MEMBERSHIP_FIELD_NAME_CHANGE_DATE"],
    ];
    for (const [req, expected, column] of cases) {
      const m = await found("u4", req, protocol);
      expect(rows(m), JSON.stringify(req)).toEqual(expected);
      expect(m.sortingColumn ?? "MEMBERSHIP_FIELD_NAME_UNSPECIFIED", JSON.stringify(req)).toBe(column);
      expect(totalOf(m)).toBe(7);
    }
  });

  it.each(PROTOCOLS)("filters by user, context type, context and role, combined with AND, over %s", async (protocol) => {
    const cases: [JsonObject[], string[]][] = [
      [[{ user: { userId: ids.u2 } }], ["u2/B", "u2/A"]],
      [[{ user: { userId: ids.admin } }], ["admin/I"]],
      [[{ user: { userId: ids.plain } }], []],
      [[{ user: { userId: "no-such-user" } }], []],
      [[{ user: { userId: ids.x1 } }], []],
      [[{ contextType: { type: "OWNER_TYPE_INSTANCE" } }], ["u5/I", "u4/I", "admin/I"]],
      [[{ contextType: { type: "OWNER_TYPE_ORG" } }], ["u3/B", "u2/B", "u2/A", "u1/A"]],
      [[{ contextType: { type: "OWNER_TYPE_SYSTEM" } }], []],
      [[{ context: { id: a.id } }], ["u2/A", "u1/A"]],
      [[{ context: { id: server.instanceId } }], ["u5/I", "u4/I", "admin/I"]],
      [[{ context: { id: "no-such-context" } }], []],
      [[{ role: { role: "ORG_OWNER" } }], ["u3/B", "u2/B", "u1/A"]],
      [[{ role: { role: "ORG_OWNER_VIEWER" } }], ["u3/B", "u2/A"]],
      [[{ role: { role: "IAM_OWNER" } }], ["u4/I", "admin/I"]],
      [[{ role: { role: "IAM_OWNER_VIEWER" } }], ["u5/I"]],
      [[{ role: { role: "SYSTEM_OWNER" } }], []],
      [[{ role: { role: "org_owner" } }], []],
      [[{ role: { role: "NOPE" } }], []],
      [
        [{ role: { role: "ORG_OWNER" } }, { context: { id: b.id } }],
        ["u3/B", "u2/B"],
      ],
      [[{ role: { role: "ORG_OWNER" } }, { role: { role: "ORG_OWNER_VIEWER" } }], ["u3/B"]],
      [[{ user: { userId: ids.u2 } }, { context: { id: a.id } }], ["u2/A"]],
      [[{ user: { userId: ids.u2 } }, { user: { userId: ids.u1 } }], []],
      [[{ contextType: { type: "OWNER_TYPE_INSTANCE" } }, { context: { id: a.id } }], []],
    ];
    for (const [filters, expected] of cases) {
      const m = await found("u4", { filters }, protocol);
      expect(rows(m), JSON.stringify(filters)).toEqual(expected);
      expect(totalOf(m), JSON.stringify(filters)).toBe(expected.length);
    }
  });

  it.each(PROTOCOLS)("pages with totals and end of list, over %s", async (protocol) => {
    const all = desc(INSTANCE_AND_ORGS_BY_CREATION);
    const cases: [JsonObject, string[], boolean, number][] = [
      [{ limit: 2 }, all.slice(0, 2), false, 2],
      [{ limit: 2, offset: 2 }, all.slice(2, 4), false, 2],
      [{ limit: 2, offset: 6 }, all.slice(6), true, 2],
      [{ limit: 7 }, all, true, 7],
      [{ offset: 7 }, [], true, 100],
      [{ offset: 100, limit: 1000 }, [], true, 1000],
      [{ limit: 3, asc: true, offset: 1 }, INSTANCE_AND_ORGS_BY_CREATION.slice(1, 4), false, 3],
    ];
    for (const [query, expected, end, applied] of cases) {
      const m = await found("u4", { query }, protocol);
      expect(rows(m), JSON.stringify(query)).toEqual(expected);
      expect(m.details, JSON.stringify(query)).toMatchObject({ totalResult: "7", appliedLimit: applied });
      expect(m.details.endOfList ?? false, JSON.stringify(query)).toBe(end);
    }
    const filtered = await found("u4", { filters: [{ contextType: { type: "OWNER_TYPE_ORG" } }], query: { limit: 1, offset: 1 } }, protocol);
    expect(rows(filtered)).toEqual(["u2/B"]);
    expect(totalOf(filtered)).toBe(4);
  });

  it.each(PROTOCOLS)("shows each caller what it may read, and counts only that, over %s", async (protocol) => {
    const sees = async (who: Name, req: JsonObject, expected: string[]) => {
      const m = await found(who, { ...req, query: { limit: 1000 } }, protocol);
      expect(rows(m), `${who} ${JSON.stringify(req)}`).toEqual(expected);
      expect(totalOf(m), `${who} ${JSON.stringify(req)}`).toBe(expected.length);
    };
    const refused = async (who: Name, req: JsonObject, code: Code) => {
      const r = await search(who, req, protocol);
      expect(r, `${who} ${JSON.stringify(req)}`).toMatchObject({ ok: false, code });
      if (protocol === "rest") expect(r.httpStatus).toBe(code === Code.NotFound ? 404 : 403);
    };
    const everything = desc(INSTANCE_AND_ORGS_BY_CREATION);
    // Instance-wide readers: the instance's and every organization's, never the system's.
    for (const who of ["admin", "u4", "u5", "u6"] as const) await sees(who, {}, everything);
    await sees("u4", { ctx: { instanceId: server.instanceId } }, everything);
    await sees("u4", { filters: [{ contextType: { type: "OWNER_TYPE_SYSTEM" } }] }, []);
    await sees("u4", { ctx: { orgId: b.id } }, ["u3/B", "u2/B"]);
    // System members see the system's memberships, of users of every instance, with ctx.system.
    await sees("admin", { ctx: { system: true } }, desc(SYSTEM_BY_CREATION));
    await sees("u6", { ctx: { system: true } }, desc(SYSTEM_BY_CREATION));
    await sees("u6", { ctx: { system: true }, filters: [{ user: { userId: ids.x1 } }] }, ["x1/system"]);
    await sees("admin", { ctx: { system: true }, filters: [{ contextType: { type: "OWNER_TYPE_INSTANCE" } }] }, []);
    await refused("u4", { ctx: { system: true } }, Code.PermissionDenied);
    await refused("u1", { ctx: { system: true } }, Code.PermissionDenied);
    // An ORG_OWNER (u1) and an ORG_OWNER_VIEWER (u2 in A, ORG_OWNER in B): their organizations only.
    await sees("u1", {}, ["u2/A", "u1/A"]);
    await sees("u1", { ctx: { orgId: a.id } }, ["u2/A", "u1/A"]);
    await sees("u1", { filters: [{ context: { id: b.id } }] }, []);
    await sees("u1", { filters: [{ user: { userId: ids.u2 } }] }, ["u2/A"]);
    await sees("u1", { filters: [{ contextType: { type: "OWNER_TYPE_INSTANCE" } }] }, []);
    await sees("u1", { filters: [{ role: { role: "ORG_OWNER" } }] }, ["u1/A"]);
    await refused("u1", { ctx: { orgId: b.id } }, Code.PermissionDenied);
    await refused("u1", { ctx: { orgId: "no-such-org" } }, Code.NotFound);
    await sees("u2", {}, ["u3/B", "u2/B", "u2/A", "u1/A"]);
    await sees("u3", { ctx: { orgId: b.id } }, ["u3/B", "u2/B"]);
    await refused("u3", { ctx: { orgId: a.id } }, Code.PermissionDenied);
    // Who may read no membership anywhere learns nothing.
    await refused("plain", {}, Code.PermissionDenied);
    await refused("plain", { ctx: { orgId: a.id } }, Code.PermissionDenied);
    await refused("plain", { ctx: { orgId: "no-such-org" } }, Code.PermissionDenied);
    await refused("plain", { ctx: { system: true } }, Code.PermissionDenied);
  });
});
