import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PROTOCOLS, protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, failed, ok, Users, type Msg } from "./helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Usernames, names and addresses differ first at a lowercase ASCII letter, so that every collation orders them alike. */
const WORDS = ["kilo", "echo", "lima", "alfa", "hotel", "bravo", "juliett", "delta", "india", "golf", "charlie", "foxtrot"];
const NAMES = ["papa", "zulu", "mike", "oscar", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey", "xray"];
const MAILS = ["nancy", "amy", "kate", "bob", "ivy", "carl", "dora", "fred", "hank", "eve", "jill", "gus"];
type State = "USER_STATE_ACTIVE" | "USER_STATE_LOCKED" | "USER_STATE_INACTIVE";
type Where = "A" | "B" | "default";

interface Made {
  id: string;
  username: string;
  type: "USER_TYPE_HUMAN" | "USER_TYPE_MACHINE";
  where: Where;
  display: string;
  email: string | undefined;
  state: State;
  created: number;
  changed: number;
}

const SPECS = WORDS.map((word, i) => ({
  username: `srt${word}`,
  type: (i % 3 === 2 ? "USER_TYPE_MACHINE" : "USER_TYPE_HUMAN") as Made["type"],
  where: (["A", "A", "B", "default"] as const)[i % 4]!,
  display: NAMES[(i * 5) % 12]!,
  email: i % 3 === 2 ? undefined : `${MAILS[(i * 7) % 12]}@srt.example`,
}));
/** Changes after all creations, in this order: [index, action]. */
const CHANGES: [number, "lock" | "deactivate" | "patch"][] = [
  [1, "lock"],
  [6, "deactivate"],
  [9, "patch"],
  [3, "lock"],
  [3, "deactivate"],
  [0, "patch"],
  [11, "lock"],
];

const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
const ids = (m: Msg): string[] => (m.result ?? []).map((u: Msg) => u.details.id);
const total = (m: Msg) => Number(m.details?.totalResult ?? 0);

describe.each(DATABASE_KINDS)("searching users (%s)", (kind) => {
  let server: TestServer;
  let admin: Users;
  let a: { id: string; primary: string };
  let b: { id: string; primary: string };
  const made: Made[] = [];
  let allIds: string[] = [];
  const inMade = () => ({ inIds: { ids: allIds } });
  const orgId = (w: Where) => (w === "A" ? a.id : w === "B" ? b.id : server.defaultOrgId);
  const domain = (w: Where) => (w === "A" ? a.primary : w === "B" ? b.primary : "default.localhost");
  const search = async (req: JsonObject, users: Users = admin) => ok(await users.call("SearchUsers", req));
  const idsWhere = (pred: (u: Made) => boolean) => made.filter(pred).map((u) => u.id);
  /** Ascending by the key, newest first when no order is asked for. */
  const byKey = (list: Made[], key: (u: Made) => string | number) => [...list].sort((x, y) => cmp(key(x), key(y)) || cmp(x.id, y.id)).map((u) => u.id);

  beforeAll(async () => {
    server = await startTestServer(kind);
    admin = new Users(server);
    a = await createOrg(server, "Search A");
    b = await createOrg(server, "Search B");
    for (const [i, spec] of SPECS.entries()) {
      const user =
        spec.type === "USER_TYPE_HUMAN"
          ? { username: spec.username, human: { profile: { givenName: "G", familyName: "F", displayName: spec.display }, email: { address: spec.email! } } }
          : { username: spec.username, machine: { name: spec.display } };
      const id = await admin.create(user, { orgId: orgId(spec.where) });
      made.push({ ...spec, id, state: "USER_STATE_ACTIVE", created: i, changed: i });
      await sleep(3);
    }
    for (const [n, [i, action]] of CHANGES.entries()) {
      const u = made[i]!;
      if (action === "lock") ok(await admin.call("LockUser", { id: u.id }));
      if (action === "deactivate") ok(await admin.call("DeactivateUser", { id: u.id }));
      if (action === "patch")
        ok(
          await admin.call("PatchUser", {
            id: u.id,
            user: u.type === "USER_TYPE_HUMAN" ? { human: { nickName: "patched" } } : { machine: { description: "patched" } },
          }),
        );
      u.state = action === "lock" ? "USER_STATE_LOCKED" : action === "deactivate" ? "USER_STATE_INACTIVE" : u.state;
      u.changed = 100 + n;
      await sleep(3);
    }
    allIds = made.map((u) => u.id);
  });
  afterAll(() => server?.close());

  describe("paging and totals", () => {
    it("returns the newest first by default, the oldest first with asc", async () => {
      const desc = await search({ filters: [inMade()] });
      expect(ids(desc)).toEqual([...allIds].reverse());
      expect(desc.details).toMatchObject({ appliedLimit: 100, totalResult: "12", endOfList: true });
      expect(desc.sortingColumn ?? "USER_FIELD_NAME_UNSPECIFIED").toBe("USER_FIELD_NAME_UNSPECIFIED");
      expect(ids(await search({ query: { asc: true }, filters: [inMade()] }))).toEqual(allIds);
    });

    it("pages with limit and offset, reporting total_result and end_of_list", async () => {
      const expected = [...allIds].reverse();
      const page = (offset: number, limit = 5) => search({ query: { limit, offset: String(offset) }, filters: [inMade()] });
      const seen: string[] = [];
      for (const offset of [0, 5, 10]) {
        const p = await page(offset);
        expect(ids(p)).toEqual(expected.slice(offset, offset + 5));
        expect(p.details).toMatchObject({ appliedLimit: 5, totalResult: "12" });
        expect(p.details.endOfList ?? false).toBe(offset === 10);
        seen.push(...ids(p));
      }
      expect(seen).toEqual(expected);
      for (const offset of [12, 50]) {
        const past = await page(offset);
        expect(ids(past)).toEqual([]);
        expect(past.details).toMatchObject({ totalResult: "12", endOfList: true });
      }
      const exact = await page(0, 12);
      expect(exact.details).toMatchObject({ totalResult: "12", endOfList: true });
    });

    it("searches every user of the instance when no filter is given", async () => {
      const all = await search({ query: { limit: 1000 } });
      expect(ids(all).filter((id) => allIds.includes(id))).toEqual([...allIds].reverse());
      expect(total(all)).toBe(all.result.length);
      expect(total(all)).toBeGreaterThan(12);
    });
  });

  describe("sorting", () => {
    const COLUMNS: [string, ((u: Made) => string | number) | undefined, ((u: Made) => boolean) | undefined][] = [
      ["USER_FIELD_NAME_ID", (u) => u.id, undefined],
      ["USER_FIELD_NAME_CREATION_DATE", (u) => u.created, undefined],
      ["USER_FIELD_NAME_CHANGE_DATE", (u) => u.changed, undefined],
      ["USER_FIELD_NAME_USERNAME", (u) => u.username, undefined],
      ["USER_FIELD_NAME_DISPLAY_NAME", (u) => u.display, undefined],
      // Machine users have no address: the order among humans is what is specified.
      ["USER_FIELD_NAME_EMAIL", (u) => u.email!, (u) => u.type === "USER_TYPE_HUMAN"],
    ];
    it.each(COLUMNS)("by %s, in both directions", async (column, key, only) => {
      const list = made.filter(only ?? (() => true));
      const filters = only ? [inMade(), { type: { type: "USER_TYPE_HUMAN" } }] : [inMade()];
      const asc = await search({ sortingColumn: column, query: { asc: true }, filters });
      expect(asc.sortingColumn).toBe(column);
      expect(ids(asc)).toEqual(byKey(list, key!));
      const desc = await search({ sortingColumn: column, filters });
      expect(ids(desc)).toEqual(byKey(list, key!).reverse());
    });

    it("by email over all users: one order and its reverse, humans in address order", async () => {
      const asc = ids(await search({ sortingColumn: "USER_FIELD_NAME_EMAIL", query: { asc: true }, filters: [inMade()] }));
      const desc = ids(await search({ sortingColumn: "USER_FIELD_NAME_EMAIL", filters: [inMade()] }));
      expect(desc).toEqual([...asc].reverse());
      const humans = made.filter((u) => u.type === "USER_TYPE_HUMAN");
      expect(asc.filter((id) => humans.some((h) => h.id === id))).toEqual(byKey(humans, (u) => u.email!));
    });

    const RANKED: [string, (u: Made) => number][] = [
      ["USER_FIELD_NAME_STATE", (u) => ["USER_STATE_ACTIVE", "USER_STATE_INACTIVE", "USER_STATE_LOCKED"].indexOf(u.state)],
      ["USER_FIELD_NAME_TYPE", (u) => (u.type === "USER_TYPE_HUMAN" ? 1 : 2)],
    ];
    it.each(RANKED)("by %s: grouped in enum order both ways, and pages that neither repeat nor skip users", async (column, rank) => {
      const rankOf = new Map(made.map((u) => [u.id, rank(u)]));
      for (const asc of [true, false]) {
        const full = ids(await search({ sortingColumn: column, query: { asc }, filters: [inMade()] }));
        expect([...full].sort()).toEqual([...allIds].sort());
        const ranks = full.map((id) => rankOf.get(id)!);
        expect(ranks).toEqual([...ranks].sort((x, y) => (asc ? x - y : y - x)));
        const paged: string[] = [];
        for (let offset = 0; offset < 12; offset += 5)
          paged.push(...ids(await search({ sortingColumn: column, query: { asc, limit: 5, offset: String(offset) }, filters: [inMade()] })));
        expect(paged).toEqual(full);
      }
    });
  });

  describe("filters", () => {
    const FILTERS: [string, JsonObject | (() => JsonObject), (u: Made) => boolean][] = [
      ["username equals", { username: { value: "srtkilo" } }, (u) => u.username === "srtkilo"],
      ["username equals is case-sensitive", { username: { value: "SRTKILO" } }, () => false],
      ["username equals ignoring case", { username: { value: "SRTKILO", method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }, (u) => u.username === "srtkilo"],
      ["username starts with", { username: { value: "srtd", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }, (u) => u.username.startsWith("srtd")],
      [
        "username starts with ignoring case",
        { username: { value: "SRTD", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } },
        (u) => u.username.startsWith("srtd"),
      ],
      ["username contains", { username: { value: "li", method: "TEXT_FILTER_METHOD_CONTAINS" } }, (u) => u.username.includes("li")],
      ["username contains ignoring case", { username: { value: "LI", method: "TEXT_FILTER_METHOD_CONTAINS_IGNORE_CASE" } }, (u) => u.username.includes("li")],
      ["username ends with", { username: { value: "o", method: "TEXT_FILTER_METHOD_ENDS_WITH" } }, (u) => u.username.endsWith("o")],
      ["username ends with ignoring case", { username: { value: "O", method: "TEXT_FILTER_METHOD_ENDS_WITH_IGNORE_CASE" } }, (u) => u.username.endsWith("o")],
      ["username: _ is no wildcard", { username: { value: "srt_", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }, () => false],
      ["username: % is no wildcard", { username: { value: "%", method: "TEXT_FILTER_METHOD_CONTAINS" } }, () => false],
      ["login name equals", () => ({ loginName: { value: `srtkilo@${a.primary}` } }), (u) => u.username === "srtkilo"],
      ["login name of another organization's domain", () => ({ loginName: { value: `srtkilo@${b.primary}` } }), () => false],
      [
        "login name ends with an organization's domain",
        () => ({ loginName: { value: `@${b.primary}`, method: "TEXT_FILTER_METHOD_ENDS_WITH" } }),
        (u) => u.where === "B",
      ],
      [
        "login name equals ignoring case",
        () => ({ loginName: { value: `SRTHOTEL@${a.primary.toUpperCase()}`, method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }),
        (u) => u.username === "srthotel",
      ],
      ["email equals", { email: { value: "amy@srt.example" } }, (u) => u.email === "amy@srt.example"],
      ["email contains", { email: { value: "an", method: "TEXT_FILTER_METHOD_CONTAINS" } }, (u) => u.email?.includes("an") ?? false],
      ["email ends with", { email: { value: "@srt.example", method: "TEXT_FILTER_METHOD_ENDS_WITH" } }, (u) => u.email !== undefined],
      ["display name of a human", { displayName: { value: "papa" } }, (u) => u.display === "papa"],
      ["display name of a machine (its name)", { displayName: { value: NAMES[(2 * 5) % 12]! } }, (u) => u.display === NAMES[(2 * 5) % 12]],
      [
        "display name starts with ignoring case",
        { displayName: { value: "U", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } },
        (u) => u.display.startsWith("u"),
      ],
      ["organization A", () => ({ organization: { orgId: a.id } }), (u) => u.where === "A"],
      ["organization of no user", { organization: { orgId: "no-such-org" } }, () => false],
      ["type human", { type: { type: "USER_TYPE_HUMAN" } }, (u) => u.type === "USER_TYPE_HUMAN"],
      ["type machine", { type: { type: "USER_TYPE_MACHINE" } }, (u) => u.type === "USER_TYPE_MACHINE"],
      ["state active", { state: { state: "USER_STATE_ACTIVE" } }, (u) => u.state === "USER_STATE_ACTIVE"],
      ["state locked", { state: { state: "USER_STATE_LOCKED" } }, (u) => u.state === "USER_STATE_LOCKED"],
      ["state inactive", { state: { state: "USER_STATE_INACTIVE" } }, (u) => u.state === "USER_STATE_INACTIVE"],
      ["ids", () => ({ inIds: { ids: [made[4]!.id, made[7]!.id, "no-such-user"] } }), (u) => [4, 7].includes(made.indexOf(u))],
    ];
    it.each(FILTERS)("%s", async (_, filter, expected) => {
      const f = typeof filter === "function" ? filter() : filter;
      const want = byKey(made.filter(expected), (u) => u.created);
      const found = await search({ filters: [inMade(), f], query: { asc: true } });
      expect(ids(found)).toEqual(want);
      expect(total(found)).toBe(want.length);
    });

    it("combines filters with AND", async () => {
      const found = await search({
        query: { asc: true },
        filters: [{ organization: { orgId: a.id } }, { type: { type: "USER_TYPE_HUMAN" } }, { state: { state: "USER_STATE_ACTIVE" } }],
      });
      expect(ids(found)).toEqual(
        byKey(
          made.filter((u) => u.where === "A" && u.type === "USER_TYPE_HUMAN" && u.state === "USER_STATE_ACTIVE"),
          (u) => u.created,
        ),
      );
      const none = await search({ filters: [{ type: { type: "USER_TYPE_HUMAN" } }, { type: { type: "USER_TYPE_MACHINE" } }] });
      expect(ids(none)).toEqual([]);
      expect(total(none)).toBe(0);
    });

    it("shows each user as GetUser does", async () => {
      const found = (await search({ filters: [inMade()], query: { asc: true } })).result as Msg[];
      for (const [i, u] of found.entries()) {
        expect(u).toEqual(await admin.get(made[i]!.id));
        expect(u.loginName).toBe(`${made[i]!.username}@${domain(made[i]!.where)}`);
        expect(u.state).toBe(made[i]!.state);
      }
    });

    it.each(PROTOCOLS)("gives the same answers over %s", async (protocol: Protocol) => {
      const users = new Users(server, protocol);
      const req = {
        sortingColumn: "USER_FIELD_NAME_USERNAME",
        query: { asc: true, limit: 4, offset: "2" },
        filters: [inMade(), { state: { state: "USER_STATE_ACTIVE" } }],
      };
      const here = await search(req, users);
      const reference = await search(req);
      const strip = (m: Msg) => ({ ...m, details: { ...m.details, timestamp: undefined, processedSequence: undefined } });
      expect(strip(here)).toEqual(strip(reference));
      expect(ids(here)).toEqual(
        byKey(
          made.filter((u) => u.state === "USER_STATE_ACTIVE"),
          (u) => u.username,
        ).slice(2, 6),
      );
    });
  });

  describe("what each caller sees", () => {
    const inOrg = (w: Where) => idsWhere((u) => u.where === w);
    /** Every user of the organization, ours and any other (none are made there but ours). */
    async function everyoneIn(id: string) {
      return ids(await search({ filters: [{ organization: { orgId: id } }], query: { limit: 1000 } }));
    }

    it("an ORG_OWNER or ORG_OWNER_VIEWER of A sees A's users only, and totals count only them", async () => {
      for (const role of ["ORG_OWNER", "ORG_OWNER_VIEWER"]) {
        const { token } = await server.createUser({ roles: [{ context: "org", contextId: a.id, roles: [role] }] });
        const caller = admin.as(token);
        const all = await search({ query: { limit: 1000 } }, caller);
        expect([...ids(all)].sort(), role).toEqual([...(await everyoneIn(a.id))].sort());
        expect(total(all)).toBe(inOrg("A").length);
        const ours = await search({ filters: [inMade()], query: { asc: true } }, caller);
        expect(ids(ours)).toEqual(inOrg("A"));
        expect(total(ours)).toBe(inOrg("A").length);
        const page = await search({ filters: [inMade()], query: { asc: true, limit: 2, offset: "1" } }, caller);
        expect(ids(page)).toEqual(inOrg("A").slice(1, 3));
        expect(total(page)).toBe(inOrg("A").length);
        const ofB = await search({ filters: [{ organization: { orgId: b.id } }] }, caller);
        expect(ids(ofB)).toEqual([]);
        expect(total(ofB)).toBe(0);
        const named = await search({ filters: [{ username: { value: "srt", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }], query: { asc: true } }, caller);
        expect(ids(named)).toEqual(inOrg("A"));
        expect(ids(await search({ ctx: { orgId: a.id }, filters: [inMade()], query: { asc: true } }, caller))).toEqual(inOrg("A"));
        failed(await caller.call("SearchUsers", { ctx: { orgId: b.id } }), Code.PermissionDenied);
        failed(await caller.call("SearchUsers", { ctx: { orgId: server.defaultOrgId } }), Code.PermissionDenied);
      }
    });

    it("roles in two organizations show both", async () => {
      const { token } = await server.createUser({
        roles: [
          { context: "org", contextId: a.id, roles: ["ORG_OWNER"] },
          { context: "org", contextId: b.id, roles: ["ORG_OWNER_VIEWER"] },
        ],
      });
      const found = await search({ filters: [inMade()], query: { asc: true } }, admin.as(token));
      expect(ids(found)).toEqual(idsWhere((u) => u.where !== "default"));
      expect(total(found)).toBe(idsWhere((u) => u.where !== "default").length);
    });

    it("IAM_OWNER_VIEWER sees every user; a plain user may not search", async () => {
      const viewer = admin.as((await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] })).token);
      const all = await search({ query: { limit: 1000 } }, viewer);
      const reference = await search({ query: { limit: 1000 } });
      expect(ids(all)).toEqual(ids(reference));
      expect(total(all)).toBe(total(reference));
      const plain = admin.as((await server.createUser({})).token);
      for (const protocol of PROTOCOLS) {
        const refused = failed(await new Users(server, protocol, plain.token).call("SearchUsers", {}), Code.PermissionDenied);
        if (protocol === "rest") expect((refused as Msg).httpStatus).toBe(403);
      }
    });

    it("an organization context limits the search to that organization", async () => {
      for (const w of ["A", "B", "default"] as const) {
        const byId = await search({ ctx: { orgId: orgId(w) }, filters: [inMade()], query: { asc: true } });
        expect(ids(byId), w).toEqual(inOrg(w));
        expect(total(byId)).toBe(inOrg(w).length);
        const byDomain = await search({ ctx: { orgDomain: domain(w) }, filters: [inMade()], query: { asc: true } });
        expect(ids(byDomain), w).toEqual(inOrg(w));
      }
      const crossed = await search({ ctx: { orgId: a.id }, filters: [{ organization: { orgId: b.id } }] });
      expect(ids(crossed)).toEqual([]);
      expect(total(crossed)).toBe(0);
      failed(await admin.call("SearchUsers", { ctx: { orgId: "no-such-org" } }), Code.NotFound);
    });
  });

  // Last: it changes B's primary domain.
  it("login names follow the primary domain of the user's organization, in reads and in the login name filter", async () => {
    const domains = protocolClient(PlatformDomains, "grpc", server.baseUrl);
    ok(await domains.call("AddDomain", { domain: { domain: "users.search-b.example" }, ctx: { orgId: b.id } }, server.adminToken));
    ok(await domains.call("SetAsPrimary", { domain: "users.search-b.example" }, server.adminToken));
    const inB = made.filter((u) => u.where === "B");
    for (const u of inB) expect((await admin.get(u.id)).loginName).toBe(`${u.username}@users.search-b.example`);
    const found = await search({
      filters: [inMade(), { loginName: { value: "@users.search-b.example", method: "TEXT_FILTER_METHOD_ENDS_WITH" } }],
      query: { asc: true },
    });
    expect(ids(found)).toEqual(inB.map((u) => u.id));
    const old = await search({ filters: [inMade(), { loginName: { value: `@${b.primary}`, method: "TEXT_FILTER_METHOD_ENDS_WITH" } }] });
    expect(ids(old)).toEqual([]);
  });
});
