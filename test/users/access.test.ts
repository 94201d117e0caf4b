import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { toConnectError } from "../../src/rpc/errors.js";
import { addUser } from "../../src/domain/user/commands.js";
import type { UserSpec } from "../../src/domain/user/model.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, DAY_MS, failed, fromNow, humanUser, ok, uniqueName, Users, type Msg } from "./helpers.js";

/**
 * Who may do what with users, written by hand from the role table:
 *   IAM_OWNER         everything in its instance
 *   IAM_OWNER_VIEWER  user.read in its instance
 *   ORG_OWNER (of A)  user.read/write/delete and user.credential.write on users of A only
 *   ORG_OWNER_VIEWER  user.read on users of A
 *   plain user        nothing but reading itself and changing its own password
 * A user that does not exist is NotFound to who holds the permission somewhere, else PermissionDenied.
 */
const CALLERS = ["iamOwner", "iamViewer", "ownerA", "viewerA", "plain"] as const;
type Caller = (typeof CALLERS)[number];
type Outcome = "ok" | "denied" | "notfound";
const [OK, D, NF] = ["ok", "denied", "notfound"] as const;
type Target = "A" | "B" | "none";

interface Row {
  rpc: string;
  /** The user the request names: human or machine. */
  kind: "human" | "machine";
  request: (id: string, prepared: string) => JsonObject;
  /** What an administrator does first to a real target; its answer is `prepared` (an id, or nothing). */
  prepare?: (admin: Users, id: string) => Promise<string>;
  /** Outcome per caller (in CALLERS order) for a user of A, of B, and for no user at all. */
  expect: Record<Target, readonly Outcome[]>;
}

const READ = { A: [OK, OK, OK, OK, D], B: [OK, OK, D, D, D], none: [NF, NF, NF, NF, D] } as const;
const WRITE = { A: [OK, D, OK, D, D], B: [OK, D, D, D, D], none: [NF, D, NF, D, D] } as const;
const exp = () => ({ expirationDate: fromNow(DAY_MS) });

const ROWS: Row[] = [
  { rpc: "GetUser", kind: "human", request: (id) => ({ id }), expect: READ },
  { rpc: "SearchPersonalAccessTokens", kind: "machine", request: (id) => ({ id }), expect: READ },
  { rpc: "SearchKeys", kind: "machine", request: (id) => ({ id }), expect: READ },
  { rpc: "SearchMetadata", kind: "human", request: (id) => ({ id }), expect: READ },
  {
    rpc: "GetMetadata",
    kind: "human",
    request: (id) => ({ id, key: "k" }),
    prepare: async (admin, id) => (ok(await admin.call("SetMetadata", { id, metadata: [{ key: "k", value: "dg==" }] })), ""),
    expect: READ,
  },
  { rpc: "SetMetadata", kind: "machine", request: (id) => ({ id, metadata: [{ key: "k", value: "dg==" }] }), expect: WRITE },
  {
    rpc: "DeleteMetadata",
    kind: "human",
    request: (id) => ({ id, key: "k" }),
    prepare: async (admin, id) => (ok(await admin.call("SetMetadata", { id, metadata: [{ key: "k", value: "dg==" }] })), ""),
    expect: WRITE,
  },
  { rpc: "PatchUser", kind: "human", request: (id) => ({ id, user: { human: { nickName: "changed" } } }), expect: WRITE },
  { rpc: "LockUser", kind: "machine", request: (id) => ({ id }), expect: WRITE },
  { rpc: "DeactivateUser", kind: "human", request: (id) => ({ id }), expect: WRITE },
  { rpc: "DeleteUser", kind: "machine", request: (id) => ({ id }), expect: WRITE },
  { rpc: "SetPassword", kind: "human", request: (id) => ({ id, password: { newPassword: "Access#Pass1", changeRequired: true } }), expect: WRITE },
  { rpc: "AddPersonalAccessToken", kind: "human", request: (id) => ({ id, pat: exp() }), expect: WRITE },
  { rpc: "AddKey", kind: "machine", request: (id) => ({ id, key: { generate: "KEY_TYPE_EC", ...exp() } }), expect: WRITE },
  { rpc: "GenerateSecret", kind: "machine", request: (id) => ({ id }), expect: WRITE },
  {
    rpc: "UnlockUser",
    kind: "machine",
    request: (id) => ({ id }),
    prepare: async (admin, id) => (ok(await admin.call("LockUser", { id })), ""),
    expect: WRITE,
  },
  {
    rpc: "ReactivateUser",
    kind: "human",
    request: (id) => ({ id }),
    prepare: async (admin, id) => (ok(await admin.call("DeactivateUser", { id })), ""),
    expect: WRITE,
  },
  {
    rpc: "RemoveSecret",
    kind: "machine",
    request: (id) => ({ id }),
    prepare: async (admin, id) => (ok(await admin.call("GenerateSecret", { id })), ""),
    expect: WRITE,
  },
  {
    rpc: "DeletePersonalAccessToken",
    kind: "human",
    request: (id, patId) => ({ id, patId: patId || "no-such-pat" }),
    prepare: async (admin, id) => (await admin.pat(id)).id,
    expect: WRITE,
  },
  {
    rpc: "DeleteKey",
    kind: "machine",
    request: (id, keyId) => ({ id, keyId: keyId || "no-such-key" }),
    prepare: async (admin, id) => ok(await admin.call("AddKey", { id, key: { generate: "KEY_TYPE_EC", ...exp() } })).details.id,
    expect: WRITE,
  },
];

const outcomeOf = (r: CallResult): Outcome | string =>
  r.ok ? OK : r.code === Code.PermissionDenied ? D : r.code === Code.NotFound ? NF : `code ${r.code}: ${r.message}`;

describe.each(DATABASE_KINDS)("access to users (%s)", (kind) => {
  let server: TestServer;
  let admin: Users;
  let a: { id: string; primary: string };
  let b: { id: string; primary: string };
  const tokens = {} as Record<Caller, string>;

  beforeAll(async () => {
    server = await startTestServer(kind);
    admin = new Users(server);
    a = await createOrg(server, "Access A");
    b = await createOrg(server, "Access B");
    tokens.iamOwner = (await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] })).token;
    tokens.iamViewer = (await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] })).token;
    tokens.ownerA = (await server.createUser({ roles: [{ context: "org", contextId: a.id, roles: ["ORG_OWNER"] }] })).token;
    tokens.viewerA = (await server.createUser({ roles: [{ context: "org", contextId: a.id, roles: ["ORG_OWNER_VIEWER"] }] })).token;
    tokens.plain = (await server.createUser({})).token;
  });
  afterAll(() => server?.close());

  const orgOf = (target: Target) => (target === "A" ? a.id : b.id);
  async function makeTarget(target: Target, kind: "human" | "machine"): Promise<string> {
    if (target === "none") return `no-such-user-${uniqueName("x")}`;
    const username = uniqueName(`t${target}`);
    return admin.create(kind === "human" ? humanUser(username) : { username, machine: { name: "target" } }, { orgId: orgOf(target) });
  }
  /** Everything an administrator sees of a user, to tell whether a call changed it. */
  async function snapshot(id: string) {
    const user = await admin.call("GetUser", { id });
    if (!user.ok) return { gone: user.code };
    const pats = ok(await admin.call("SearchPersonalAccessTokens", { id })).details.totalResult ?? "0";
    const keys = ok(await admin.call("SearchKeys", { id })).details.totalResult ?? "0";
    return { user: (user.message as Msg).user, pats, keys };
  }

  it.each(ROWS.map((r) => [r.rpc, r] as const))("%s: each role gets exactly its rows of the table, and refusals change nothing", async (_, row) => {
    const wrong: string[] = [];
    for (const target of ["A", "B", "none"] as const) {
      for (const [i, caller] of CALLERS.entries()) {
        const protocol = PROTOCOLS[i % PROTOCOLS.length]!;
        const id = await makeTarget(target, row.kind);
        const prepared = target !== "none" && row.prepare ? await row.prepare(admin, id) : "";
        const before = target === "none" ? undefined : await snapshot(id);
        const result = await new Users(server, protocol, tokens[caller]).call(row.rpc, row.request(id, prepared));
        const expected = row.expect[target][i];
        const got = outcomeOf(result);
        if (got !== expected) wrong.push(`${caller} on ${target} over ${protocol}: expected ${expected}, got ${got}`);
        if (protocol === "rest" && !result.ok) expect(result.httpStatus).toBe(got === D ? 403 : 404);
        if (before) {
          const after = await snapshot(id);
          if (got === OK && !row.rpc.startsWith("Get") && !row.rpc.startsWith("Search"))
            expect(after, `${caller} ${row.rpc} changed nothing`).not.toEqual(before);
          else expect(after, `${caller} ${row.rpc} on ${target} changed something`).toEqual(before);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("CreateUser: in A for its ORG_OWNER only; the default organization (no ctx) and B for the IAM_OWNER only", async () => {
    const wrong: string[] = [];
    const expected: Record<string, readonly Outcome[]> = { A: [OK, D, OK, D, D], B: [OK, D, D, D, D], default: [OK, D, D, D, D] };
    for (const [where, outcomes] of Object.entries(expected)) {
      for (const [i, caller] of CALLERS.entries()) {
        const username = uniqueName(`created${where}`);
        const ctx = where === "A" ? { orgId: a.id } : where === "B" ? { orgId: b.id } : undefined;
        const result = await new Users(server, PROTOCOLS[i]!, tokens[caller]).call("CreateUser", { user: humanUser(username), ...(ctx && { ctx }) });
        if (outcomeOf(result) !== outcomes[i]) wrong.push(`${caller} in ${where}: expected ${outcomes[i]}, got ${outcomeOf(result)}`);
        const found = ok(await admin.call("SearchUsers", { filters: [{ username: { value: username } }] })).result ?? [];
        expect(found.map((u: Msg) => u.details.resourceOwner.id)).toEqual(result.ok ? [ctx?.orgId ?? server.defaultOrgId] : []);
        if (result.ok) expect(found[0].loginName).toBe(`${username}@${where === "A" ? a.primary : where === "B" ? b.primary : "default.localhost"}`);
      }
    }
    // By domain: the organization with that primary domain.
    const byDomain = await new Users(server, "grpc", tokens.ownerA).create(humanUser(uniqueName("bydomain")), { orgDomain: a.primary });
    expect((await admin.get(byDomain)).details.resourceOwner.id).toBe(a.id);
    expect(wrong).toEqual([]);
  });

  it("a plain user reads itself and changes its own password with the current one, nothing more", async () => {
    const id = await admin.create(humanUser(uniqueName("plainself"), { password: "Plain#Pass0" }));
    const { token } = await admin.pat(id);
    const other = await admin.create(humanUser(uniqueName("plainother"), { password: "Other#Pass0" }));
    for (const protocol of PROTOCOLS) {
      const self = new Users(server, protocol, token);
      expect(ok(await self.call("GetUser", { id })).user.details.id).toBe(id);
      failed(await self.call("GetUser", { id: other }), Code.PermissionDenied);
      failed(await self.call("GetUser", { id: "no-such-user" }), Code.PermissionDenied);
      failed(await self.call("SearchUsers", {}), Code.PermissionDenied);
      for (const rpc of ["LockUser", "DeactivateUser", "DeleteUser", "SearchPersonalAccessTokens", "SearchKeys"])
        failed(await self.call(rpc, { id }), Code.PermissionDenied);
      failed(await self.call("PatchUser", { id, user: { username: uniqueName("renamed") } }), Code.PermissionDenied);
      failed(await self.call("AddPersonalAccessToken", { id, pat: exp() }), Code.PermissionDenied);
      failed(await self.call("SetPassword", { id: other, password: { newPassword: "Other#Pass1", currentPassword: "Other#Pass0" } }), Code.PermissionDenied);
      failed(await self.call("CreateUser", { user: humanUser(uniqueName("byplain")) }), Code.PermissionDenied);
    }
    ok(await admin.as(token).call("SetPassword", { id, password: { newPassword: "Plain#Pass1", currentPassword: "Plain#Pass0" } }));
    expect((await admin.get(id)).state).toBe("USER_STATE_ACTIVE");
  });

  describe("losing access", () => {
    /** A machine user with IAM_OWNER: even the mightiest token is refused at once. */
    async function powerful() {
      const user = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
      const second = (await admin.pat(user.userId)).token;
      return { ...user, second };
    }
    const works = async (token: string, id: string, protocol: Protocol = "grpc") => ok(await new Users(server, protocol, token).call("GetUser", { id }));
    const refused = async (token: string, id: string, protocol: Protocol = "grpc") =>
      failed(await new Users(server, protocol, token).call("GetUser", { id }), Code.Unauthenticated);

    it.each(PROTOCOLS)(
      "lock, deactivate and delete refuse the user's tokens on the very next call; unlock and reactivate restore them (%s)",
      async (protocol) => {
        const { userId: id, token, second } = await powerful();
        await works(token, id, protocol);
        await works(second, id, protocol);
        ok(await admin.call("LockUser", { id }));
        await refused(token, id, protocol);
        await refused(second, id, protocol);
        ok(await admin.call("UnlockUser", { id }));
        await works(token, id, protocol);
        ok(await admin.call("DeactivateUser", { id }));
        await refused(token, id, protocol);
        ok(await admin.call("ReactivateUser", { id }));
        await works(second, id, protocol);
        // Locked, then deactivated: reactivating is what restores it.
        ok(await admin.call("LockUser", { id }));
        ok(await admin.call("DeactivateUser", { id }));
        await refused(token, id, protocol);
        failed(await admin.call("UnlockUser", { id }), Code.FailedPrecondition);
        ok(await admin.call("ReactivateUser", { id }));
        await works(token, id, protocol);
        expect((await admin.get(id)).state).toBe("USER_STATE_ACTIVE");
        ok(await admin.call("DeleteUser", { id }));
        await refused(token, id, protocol);
        await refused(second, id, protocol);
      },
    );

    it("a user who locks itself out is refused at once, and an ORG_OWNER's lock works the same way", async () => {
      const { userId: id, token } = await powerful();
      await works(token, id);
      ok(await admin.as(token).call("LockUser", { id }));
      await refused(token, id);
      ok(await admin.call("UnlockUser", { id }));

      const inA = await admin.create({ username: uniqueName("lockedbyowner"), machine: { name: "svc" } }, { orgId: a.id });
      const pat = await admin.pat(inA);
      await works(pat.token, inA);
      ok(await admin.as(tokens.ownerA).call("DeactivateUser", { id: inA }));
      await refused(pat.token, inA);
      ok(await admin.as(tokens.ownerA).call("ReactivateUser", { id: inA }));
      await works(pat.token, inA);
      ok(await admin.as(tokens.ownerA).call("DeleteUser", { id: inA }));
      await refused(pat.token, inA);
    });

    it("the state machine: lock only from active, unlock only from locked, deactivate from active or locked, reactivate only from inactive", async () => {
      const id = await admin.create({ username: uniqueName("states"), machine: { name: "svc" } });
      const step = async (rpc: string, expected: "ok" | "failed", state: string) => {
        const result = await admin.call(rpc, { id });
        if (expected === "ok") ok(result);
        else failed(result, Code.FailedPrecondition);
        expect((await admin.get(id)).state, `${rpc} → ${state}`).toBe(state);
      };
      await step("UnlockUser", "failed", "USER_STATE_ACTIVE");
      await step("ReactivateUser", "failed", "USER_STATE_ACTIVE");
      await step("LockUser", "ok", "USER_STATE_LOCKED");
      await step("LockUser", "failed", "USER_STATE_LOCKED");
      await step("ReactivateUser", "failed", "USER_STATE_LOCKED");
      await step("DeactivateUser", "ok", "USER_STATE_INACTIVE");
      await step("LockUser", "failed", "USER_STATE_INACTIVE");
      await step("UnlockUser", "failed", "USER_STATE_INACTIVE");
      await step("DeactivateUser", "failed", "USER_STATE_INACTIVE");
      await step("ReactivateUser", "ok", "USER_STATE_ACTIVE");
      await step("DeactivateUser", "ok", "USER_STATE_INACTIVE");
      await step("ReactivateUser", "ok", "USER_STATE_ACTIVE");
      await step("LockUser", "ok", "USER_STATE_LOCKED");
      await step("UnlockUser", "ok", "USER_STATE_ACTIVE");
    });

    it("DeleteUser ends memberships: an ORG_OWNER deleted and re-created under the same username owns nothing", async () => {
      const username = uniqueName("formerowner");
      const ownerId = await admin.create({ username, machine: { name: "owner" } });
      const org = await createOrg(server, `Owned ${username}`, [ownerId]);
      const inOrg = await admin.create({ username: uniqueName("member"), machine: { name: "svc" } }, { orgId: org.id });
      const first = await admin.pat(ownerId);
      ok(await admin.as(first.token).call("LockUser", { id: inOrg }));
      ok(await admin.call("DeleteUser", { id: ownerId }));
      await refused(first.token, inOrg);
      const again = await admin.create({ username, machine: { name: "owner" } });
      const second = await admin.pat(again);
      failed(await admin.as(second.token).call("UnlockUser", { id: inOrg }), Code.PermissionDenied);
      failed(await admin.as(second.token).call("GetUser", { id: inOrg }), Code.PermissionDenied);
      const rows = await server.service.store.db.selectFrom("memberships").select("user_id").where("user_id", "=", ownerId).execute();
      expect(rows).toEqual([]);
    });
  });

  it("DeleteOrganization takes its users and their tokens with it", async () => {
    const org = await createOrg(server, `Doomed ${uniqueName("org")}`);
    const id = await admin.create({ username: uniqueName("doomed"), machine: { name: "svc" } }, { orgId: org.id });
    const { token } = await admin.pat(id);
    ok(await admin.as(token).call("GetUser", { id }));
    ok(await protocolClient(PlatformOrganizations, "grpc", server.baseUrl).call("DeleteOrganization", { id: org.id }, server.adminToken));
    failed(await admin.as(token).call("GetUser", { id }), Code.Unauthenticated);
    failed(await admin.call("GetUser", { id }), Code.NotFound);
  });

  it("usernames are unique regardless of case beyond ASCII too, on create and on rename", async () => {
    for (const [upper, lower] of [
      ["ÄDAM", "ädam"],
      ["ДИМА", "дима"],
      ["ΣΟΦΙΑ", "σοφια"],
      ["ÉLODIE", "élodie"],
    ] as const) {
      const suffix = uniqueName("u");
      const id = await admin.create({ username: `${upper}${suffix}`, machine: { name: "svc" } });
      failed(await admin.call("CreateUser", { user: humanUser(`${lower}${suffix}`, { email: { address: `${suffix}@mail.example` } }) }), Code.AlreadyExists);
      const other = await admin.create({ username: `other${suffix}`, machine: { name: "svc" } });
      failed(await admin.call("PatchUser", { id: other, user: { username: `${lower}${suffix}` } }), Code.AlreadyExists);
      const found = ok(
        await admin.call("SearchUsers", { filters: [{ username: { value: `${lower}${suffix}`, method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }] }),
      );
      expect(found.result.map((u: Msg) => u.details.id)).toEqual([id]);
    }
  });

  describe("concurrent changes", () => {
    it("CreateUser with one username in different cases: exactly one wins, the others are AlreadyExists", async () => {
      for (let round = 0; round < 3; round++) {
        const base = uniqueName("race");
        const variants = Array.from({ length: 10 }, (_, i) => [...base].map((c, j) => ((i + j) % ((i % 3) + 2) === 0 ? c.toUpperCase() : c)).join(""));
        variants[9] = base.toUpperCase();
        const results = await Promise.all(
          variants.map((username, i) => {
            const user = i % 2 === 0 ? humanUser(username) : { username, machine: { name: "racer" } };
            return new Users(server, PROTOCOLS[i % PROTOCOLS.length]!).call("CreateUser", { user });
          }),
        );
        const won = results.filter((r) => r.ok);
        expect(won, JSON.stringify(results)).toHaveLength(1);
        for (const r of results.filter((x) => !x.ok)) expect(r, JSON.stringify(r)).toMatchObject({ ok: false, code: Code.AlreadyExists });
        const found = ok(await admin.call("SearchUsers", { filters: [{ username: { value: base, method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }] }));
        expect(found.result.map((u: Msg) => u.details.id)).toEqual([(won[0] as Msg).message.details.id]);
      }
    });

    it("DeleteUser racing with new credentials leaves none behind: no token, key or secret outlives its user", async () => {
      const dangling: string[] = [];
      for (let round = 0; round < 10; round++) {
        const id = await admin.create({ username: uniqueName("racedelete"), machine: { name: "svc" } });
        const results = await Promise.all([
          admin.call("DeleteUser", { id }),
          ...Array.from({ length: 4 }, () => admin.call("AddPersonalAccessToken", { id, pat: exp() })),
          ...Array.from({ length: 2 }, () => admin.call("AddKey", { id, key: { generate: "KEY_TYPE_EC", ...exp() } })),
          admin.call("GenerateSecret", { id }),
        ]);
        ok(results[0]!);
        for (const r of results.slice(1)) if (!r.ok) expect(r, JSON.stringify(r)).toMatchObject({ code: Code.NotFound });
        for (const table of ["personal_access_tokens", "user_keys", "user_secrets"] as const) {
          const rows = await server.service.store.db.selectFrom(table).select("user_id").where("user_id", "=", id).execute();
          if (rows.length > 0)
            dangling.push(`round ${round}: ${rows.length} rows of ${table} (${results.slice(1).filter((r) => r.ok).length} additions answered OK)`);
        }
      }
      expect(dangling).toEqual([]);
    });

    it("PatchUser renaming two users to one username in different cases: exactly one wins", async () => {
      const target = uniqueName("rename");
      const ids = [];
      for (let i = 0; i < 4; i++) ids.push(await admin.create({ username: uniqueName("before"), machine: { name: "svc" } }));
      const names = [target, target.toUpperCase(), `${target[0]!.toUpperCase()}${target.slice(1)}`, target];
      const results = await Promise.all(ids.map((id, i) => new Users(server, PROTOCOLS[i]!).call("PatchUser", { id, user: { username: names[i] } })));
      expect(
        results.filter((r) => r.ok),
        JSON.stringify(results),
      ).toHaveLength(1);
      for (const r of results.filter((x) => !x.ok)) expect(r).toMatchObject({ code: Code.AlreadyExists });
      const found = ok(await admin.call("SearchUsers", { filters: [{ username: { value: target, method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }] }));
      expect(found.details.totalResult).toBe("1");
    });

    // The user row goes to the server with the commit (a deferred statement): a username taken
    // between the check and the commit must fail that commit as AlreadyExists, leaving no event.
    it("CreateUser of one username once over each protocol at the same time: exactly one wins, the losers leave no event", async () => {
      const target = uniqueName("race");
      const results = await Promise.all(
        PROTOCOLS.map((protocol) => new Users(server, protocol).call("CreateUser", { user: { username: target, machine: { name: "svc" } } })),
      );
      expect(
        results.filter((r) => r.ok),
        JSON.stringify(results),
      ).toHaveLength(1);
      for (const r of results.filter((x) => !x.ok)) expect(r).toMatchObject({ code: Code.AlreadyExists });
      const winner: Msg = results.find((r) => r.ok)!.message;
      const events = await server.service.store.db
        .selectFrom("events")
        .select("aggregate_id")
        .where("event_type", "=", "user.machine.added")
        .where("payload", "@>", JSON.stringify({ username: target }) as never)
        .execute();
      expect(events.map((e) => e.aggregate_id)).toEqual([winner.details.id]);
    });

    // The same race made certain: both transactions pass the username check before either
    // sends its (deferred) user row; the second commit is the one the unique index refuses.
    it.runIf(kind === "postgres")(
      "a username taken between addUser's check and its commit fails that commit as AlreadyExists, leaving no event, user or password row",
      async () => {
        const username = uniqueName("interleaved");
        const actor = { instanceId: server.instanceId, userId: "test" };
        const spec = (): UserSpec => ({
          username,
          type: {
            kind: "human",
            profile: { givenName: "Ada", familyName: "Race", displayName: "Ada Race", nickName: "", preferredLanguage: "", gender: undefined },
            email: { address: `${username}@example.com`, verified: true },
            phone: undefined,
            passwordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
            passwordChangeRequired: false,
          },
        });
        const store = server.service.store;
        let secondChecked!: () => void;
        const checked = new Promise<void>((resolve) => (secondChecked = resolve));
        let firstCommitted!: () => void;
        const committed = new Promise<void>((resolve) => (firstCommitted = resolve));
        const first = store.transact(async (tx) => {
          const created = await addUser(tx, actor, server.defaultOrgId, spec());
          // Were the row sent at once, the second would wait on the index for this commit instead.
          await Promise.race([checked, new Promise((resolve) => setTimeout(resolve, 5_000))]);
          return created.id;
        });
        let loserId = "";
        const second = store.transact(async (tx) => {
          const created = await addUser(tx, actor, server.defaultOrgId, spec());
          loserId = created.id;
          secondChecked();
          await committed;
          return created.id;
        });
        const winnerId = await first;
        firstCommitted();
        const lost = await second.then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(lost, "the second commit succeeded").toBeDefined();
        expect(toConnectError(lost).error.code).toBe(Code.AlreadyExists);
        const db = store.db;
        expect((await db.selectFrom("users").select("id").where("username", "=", username).execute()).map((r) => r.id)).toEqual([winnerId]);
        expect(await db.selectFrom("events").select("aggregate_id").where("aggregate_id", "=", loserId).execute()).toEqual([]);
        expect(await db.selectFrom("user_secrets").select("user_id").where("user_id", "=", loserId).execute()).toEqual([]);
      },
    );
  });
});
