import { Code } from "@connectrpc/connect";
import { PlatformUserSchemas } from "../../gen/platform/resources/user_schema/v3alpha/user_schema_service_pb.js";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  at,
  createInstance,
  DAY_MS,
  failed,
  fromNow,
  humanAdmin,
  INSTANCES,
  instanceJson,
  MEMBERS,
  must,
  ok,
  ORGS,
  PROTOCOLS,
  uniqueDomain,
  USERS,
  type Msg,
} from "./helpers.js";

/**
 * The life of an instance: created with its first organization and administrator (and a
 * PAT, shown once), served on its domains at once, domains moved about with the Host lookup
 * following at once, patched, and deleted with everything of it unreachable.
 */
describe.each(DATABASE_KINDS)("instance lifecycle (%s)", (kind) => {
  let server: TestServer;
  let port: number;
  /** The system member's client on the first instance's host. */
  const sys = () => at(INSTANCES, "grpc", "localhost", port);
  const call = (method: string, req: Msg) => sys().call(method, req, server.adminToken);
  const getInstance = async (id: string) => (await must(call("GetInstance", { id }), `get ${id}`)).instance;

  beforeAll(async () => {
    server = await startTestServer(kind);
    port = server.service.port;
  });
  afterAll(() => server?.close());

  it("creates an instance with a human administrator, a password policy and a PAT that works on the new host only", async () => {
    const primary = uniqueDomain("life");
    const second = uniqueDomain("life-second");
    const created = ok(
      await at(INSTANCES, "rest", "localhost", port).call(
        "CreateInstance",
        {
          instance: instanceJson([primary, second.toUpperCase()], {
            name: "Life Instance",
            firstOrgName: "Life Org",
            defaultLanguage: "de",
            passwordPolicy: { minLength: 4 },
            admin: { user: humanAdmin("boss", "abcd"), patExpirationDate: fromNow(DAY_MS) },
          }),
        },
        server.adminToken,
      ),
    );
    expect(created.details).toMatchObject({ id: expect.any(String), resourceOwner: { type: "OWNER_TYPE_SYSTEM" } });
    expect(created.details.resourceOwner.id ?? "").toBe("");
    expect(created.orgId).toEqual(expect.any(String));
    expect(created.adminUserId).toEqual(expect.any(String));
    expect(created.adminPat).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const id = created.details.id as string;

    const instance = await getInstance(id);
    expect(instance).toMatchObject({
      details: { id, sequence: created.details.sequence, resourceOwner: { type: "OWNER_TYPE_SYSTEM" } },
      name: "Life Instance",
      state: "INSTANCE_STATE_ACTIVE",
      defaultOrgId: created.orgId,
      defaultLanguage: "de",
      passwordPolicy: { minLength: 4 },
    });
    expect(instance.passwordPolicy).toEqual({ minLength: 4 });
    expect(instance.auditLogRetention).toBeUndefined();
    // Stored in lower case, the primary (the first given) first.
    expect(instance.domains.map((d: Msg) => [d.domain, Boolean(d.isPrimary)])).toEqual([
      [primary, true],
      [second, false],
    ]);

    // The PAT works on the new instance's hosts, on every protocol.
    for (const protocol of PROTOCOLS) {
      for (const host of [primary, second]) {
        const users = ok(
          await at(USERS, protocol, host, port).call("SearchUsers", { filters: [{ inIds: { ids: [created.adminUserId] } }] }, created.adminPat),
          `${protocol} ${host}`,
        );
        expect(users.result, `${protocol} ${host}`).toHaveLength(1);
        expect(users.result[0], protocol).toMatchObject({
          username: "boss",
          loginName: `boss@life-org.${primary}`,
          details: { resourceOwner: { type: "OWNER_TYPE_ORG", id: created.orgId } },
        });
      }
    }
    // … and not on the first instance's host: tokens belong to their instance.
    failed(await at(USERS, "grpc", "localhost", port).call("SearchUsers", {}, created.adminPat), Code.Unauthenticated, "PAT on another instance's host");

    // The administrator is IAM_OWNER of the new instance, and nothing else.
    const memberships = ok(
      await at(MEMBERS, "grpc", primary, port).call("SearchMemberships", { filters: [{ user: { userId: created.adminUserId } }] }, created.adminPat),
    );
    expect(memberships.result).toHaveLength(1);
    expect(memberships.result[0]).toMatchObject({ userId: created.adminUserId, context: { type: "OWNER_TYPE_INSTANCE", id }, roles: ["IAM_OWNER"] });
    // … so it may read and change its instance.
    expect((await at(INSTANCES, "grpc", primary, port).call("GetInstance", { id }, created.adminPat)).ok).toBe(true);

    // The first organization is the default one, with the given name and a domain under the primary.
    const org = ok(await at(ORGS, "grpc", primary, port).call("GetInstanceDefault", {}, created.adminPat));
    expect(JSON.stringify(org)).toContain(created.orgId);
    expect(JSON.stringify(org)).toContain("Life Org");

    // The password was stored: checking it as the current password succeeds, a wrong one fails.
    const setPassword = (current: string) =>
      at(USERS, "grpc", primary, port).call(
        "SetPassword",
        { id: created.adminUserId, password: { newPassword: "efgh", currentPassword: current } },
        created.adminPat,
      );
    failed(await setPassword("wrong"), Code.InvalidArgument, "wrong current password");
    ok(await setPassword("abcd"), "right current password");
  });

  it("creates with a machine administrator, and without a PAT when none is asked for", async () => {
    const domain = uniqueDomain("life-machine");
    const created = ok(
      await call("CreateInstance", { instance: instanceJson([domain], { admin: { user: { username: "robot", machine: { name: "Robot" } } } }) }),
    );
    expect(created.adminPat ?? "").toBe("");
    const admin = server.service.store.db;
    const user = await admin
      .selectFrom("users")
      .selectAll()
      .where("instance_id", "=", created.details.id)
      .where("id", "=", created.adminUserId)
      .executeTakeFirstOrThrow();
    expect(user.username).toBe("robot");
    const memberships = await admin.selectFrom("memberships").selectAll().where("instance_id", "=", created.details.id).execute();
    expect(memberships.map((m) => [m.user_id, m.context_type, m.context_id, m.roles])).toEqual([
      [created.adminUserId, "instance", created.details.id, ["IAM_OWNER"]],
    ]);
    const tokens = await admin.selectFrom("personal_access_tokens").select("id").where("instance_id", "=", created.details.id).execute();
    expect(tokens).toHaveLength(0);
    // The default language is "en" and the policy the default one when none was given.
    const instance = await getInstance(created.details.id);
    expect(instance.defaultLanguage).toBe("en");
    expect(instance.passwordPolicy).toEqual({ minLength: 8, requireUppercase: true, requireLowercase: true, requireNumber: true, requireSymbol: true });
  });

  it("checks the administrator's password against the new instance's policy, and creates nothing when it fails", async () => {
    const domain = uniqueDomain("life-weak");
    const weak = failed(
      await call("CreateInstance", { instance: instanceJson([domain], { admin: { user: humanAdmin("boss", "abcd") } }) }),
      Code.InvalidArgument,
      "default policy",
    );
    expect(weak.message).toContain("at least 8 characters");
    expect(weak.message).toContain("an uppercase letter");
    expect(weak.message).toContain("a number");
    expect(weak.message).toContain("a symbol");
    const strict = failed(
      await call("CreateInstance", {
        instance: instanceJson([domain], { passwordPolicy: { minLength: 10, requireNumber: true }, admin: { user: humanAdmin("boss", "abcdefgh") } }),
      }),
      Code.InvalidArgument,
      "strict policy",
    );
    expect(strict.message).toContain("at least 10 characters");
    expect(strict.message).toContain("a number");
    expect(strict.message).not.toContain("uppercase");
    // Nothing was created: the domain is free and unknown.
    const found = ok(await call("SearchInstances", { filters: [{ domain: { value: domain } }] }));
    expect(found.result ?? []).toEqual([]);
    failed(await at(USERS, "grpc", domain, port).call("SearchUsers", {}), Code.NotFound, "host of the refused instance");
    await createInstance(sys(), server.adminToken, [domain]);
  });

  it("applies each instance's password policy to CreateUser on its host; PatchInstance changes it", async () => {
    const domain = uniqueDomain("life-policy");
    const created = await createInstance(sys(), server.adminToken, [domain], { passwordPolicy: { minLength: 4 } });
    const users = at(USERS, "rest", domain, port);
    ok(await users.call("CreateUser", { user: humanAdmin("four", "abcd") }, created.adminPat), "abcd under minLength 4");
    const short = failed(await users.call("CreateUser", { user: humanAdmin("three", "abc") }, created.adminPat), Code.InvalidArgument, "abc under minLength 4");
    expect(short.message).toContain("at least 4 characters");
    expect(short.message).not.toMatch(/uppercase|number|symbol/);

    // The first instance keeps the default policy; every unmet rule is named.
    const onDefault = failed(
      await at(USERS, "rest", "localhost", port).call("CreateUser", { user: humanAdmin("default-four", "abcd") }, server.adminToken),
      Code.InvalidArgument,
    );
    for (const rule of ["at least 8 characters", "an uppercase letter", "a number", "a symbol"]) expect(onDefault.message).toContain(rule);
    expect(onDefault.message).not.toContain("a lowercase letter");

    const before = await getInstance(created.id);
    const patched = ok(
      await at(INSTANCES, "grpc", domain, port).call(
        "PatchInstance",
        { id: created.id, instance: { passwordPolicy: { minLength: 6, requireNumber: true, requireUppercase: true } } },
        created.adminPat,
      ),
    );
    expect(Number(patched.details.sequence)).toBe(Number(before.details.sequence) + 1);
    expect((await getInstance(created.id)).passwordPolicy).toEqual({ minLength: 6, requireNumber: true, requireUppercase: true });
    const now = failed(await users.call("CreateUser", { user: humanAdmin("after-patch", "abcd") }, created.adminPat), Code.InvalidArgument);
    for (const rule of ["at least 6 characters", "a number", "an uppercase letter"]) expect(now.message).toContain(rule);
    expect(now.message).not.toMatch(/symbol|lowercase/);
    ok(await users.call("CreateUser", { user: humanAdmin("after-patch", "Abcde1") }, created.adminPat));
    // SetPassword follows the patched policy too.
    const set = failed(
      await users.call("SetPassword", { id: created.adminUserId, password: { newPassword: "abcdef" } }, created.adminPat),
      Code.InvalidArgument,
    );
    expect(set.message).toContain("a number");
  });

  it("patches name and default language and keeps what is absent; a patch that changes nothing appends nothing", async () => {
    const domain = uniqueDomain("life-patch");
    const created = await createInstance(sys(), server.adminToken, [domain], { defaultLanguage: "fr", passwordPolicy: { minLength: 5, requireSymbol: true } });
    const start = await getInstance(created.id);
    const p1 = ok(await call("PatchInstance", { id: created.id, instance: { name: "Renamed" } }));
    expect(p1.details).toMatchObject({ id: created.id, resourceOwner: { type: "OWNER_TYPE_SYSTEM" } });
    let now = await getInstance(created.id);
    expect(now).toMatchObject({ name: "Renamed", defaultLanguage: "fr", passwordPolicy: { minLength: 5, requireSymbol: true } });
    expect(Number(now.details.sequence)).toBe(Number(start.details.sequence) + 1);
    expect(now.details.changeDate).toBe(p1.details.changeDate);

    ok(await call("PatchInstance", { id: created.id, instance: { defaultLanguage: "it" } }));
    now = await getInstance(created.id);
    expect(now).toMatchObject({ name: "Renamed", defaultLanguage: "it" });
    expect(Number(now.details.sequence)).toBe(Number(start.details.sequence) + 2);

    // The same values again: success, same sequence, no event.
    const events = async () =>
      Number((await sql<{ n: number }>`select count(*)::int as n from events where instance_id = ${created.id}`.execute(server.service.store.db)).rows[0]!.n);
    const eventsBefore = await events();
    const same = ok(await call("PatchInstance", { id: created.id, instance: { name: "Renamed", defaultLanguage: "it" } }));
    expect(same.details.sequence).toBe(now.details.sequence);
    const empty = ok(await call("PatchInstance", { id: created.id, instance: {} }));
    expect(empty.details.sequence).toBe(now.details.sequence);
    expect(await events()).toBe(eventsBefore);

    failed(await call("PatchInstance", { id: "no-such-instance", instance: { name: "x" } }), Code.NotFound);
  });

  // jsonb hands the stored policy back with its keys reordered: a naive comparison saw a change.
  it("a patch repeating the stored password policy appends nothing (docs/api.md: a patch that changes nothing appends nothing)", async () => {
    const created = await createInstance(sys(), server.adminToken, [uniqueDomain("life-same-policy")], {
      passwordPolicy: { minLength: 5, requireSymbol: true },
    });
    const start = await getInstance(created.id);
    const same = ok(await call("PatchInstance", { id: created.id, instance: { passwordPolicy: { minLength: 5, requireSymbol: true } } }));
    expect(same.details.sequence).toBe(start.details.sequence);
    expect((await getInstance(created.id)).details.sequence).toBe(start.details.sequence);
  });

  it("searches: filters combine, every sorting column orders, pages count the whole result", async () => {
    const tag = uniqueDomain("life-search").split(".")[0]!;
    const made: { id: string; name: string }[] = [];
    for (const name of ["charlie", "Alpha", "bravo"]) {
      const created = await createInstance(sys(), server.adminToken, [`${name.toLowerCase()}.${tag}.example`], { name: `${tag} ${name}` });
      made.push({ id: created.id, name: `${tag} ${name}` });
    }
    // Change the first-created last, so that change date and creation date orders differ.
    ok(await call("PatchInstance", { id: made[0]!.id, instance: { defaultLanguage: "fr" } }));
    const search = async (extra: Msg) =>
      ok(await call("SearchInstances", { filters: [{ domain: { value: `.${tag}.example`, method: "TEXT_FILTER_METHOD_ENDS_WITH" } }], ...extra }));
    const names = (m: Msg) => (m.result as Msg[]).map((r) => r.name);
    const byCreation = made.map((m) => m.name);
    expect(names(await search({ query: { asc: true } }))).toEqual(byCreation);
    expect(names(await search({}))).toEqual([...byCreation].reverse());
    expect(names(await search({ sortingColumn: "INSTANCE_FIELD_NAME_NAME", query: { asc: true } }))).toEqual([
      `${tag} Alpha`,
      `${tag} bravo`,
      `${tag} charlie`,
    ]);
    expect(names(await search({ sortingColumn: "INSTANCE_FIELD_NAME_CHANGE_DATE", query: { asc: true } }))).toEqual([
      made[1]!.name,
      made[2]!.name,
      made[0]!.name,
    ]);
    expect((await search({ sortingColumn: "INSTANCE_FIELD_NAME_ID", query: { asc: true } })).result.map((r: Msg) => r.details.id)).toEqual(
      made.map((m) => m.id).sort(),
    );
    const page = await search({ query: { asc: true, offset: 1, limit: 1 } });
    expect(names(page)).toEqual([byCreation[1]]);
    expect(page.details).toMatchObject({ totalResult: "3", appliedLimit: 1 });
    expect(page.details.endOfList ?? false).toBe(false);
    const past = await search({ query: { offset: 5 } });
    expect(past.result ?? []).toEqual([]);
    expect(past.details.totalResult).toBe("3");
    // Filters are combined with AND.
    const both = ok(
      await call("SearchInstances", {
        filters: [{ name: { value: `${tag} b`, method: "TEXT_FILTER_METHOD_STARTS_WITH" } }, { inIds: { ids: made.map((m) => m.id) } }],
      }),
    );
    expect(names(both)).toEqual([`${tag} bravo`]);
    const none = ok(await call("SearchInstances", { filters: [{ name: { value: `${tag} bravo` } }, { inIds: { ids: [made[0]!.id] } }] }));
    expect(none.result ?? []).toEqual([]);
    const ignoringCase = ok(await call("SearchInstances", { filters: [{ name: { value: `${tag} ALPHA`, method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }] }));
    expect(names(ignoringCase)).toEqual([`${tag} Alpha`]);
    // LIKE wildcards in a value are plain characters.
    const wildcard = ok(await call("SearchInstances", { filters: [{ name: { value: `${tag}%`, method: "TEXT_FILTER_METHOD_STARTS_WITH" } }] }));
    expect(wildcard.result ?? []).toEqual([]);
  });

  it("refuses a domain another instance has (any case), and nothing of the refused instance stays", async () => {
    const taken = uniqueDomain("life-taken");
    const owner = await createInstance(sys(), server.adminToken, [taken]);
    const free = uniqueDomain("life-free");
    for (const domains of [[taken], [free, taken], [free, taken.toUpperCase()], ["localhost"], [free, "LOCALHOST"]]) {
      failed(await call("CreateInstance", { instance: instanceJson(domains) }), Code.AlreadyExists, JSON.stringify(domains));
    }
    // Two spellings of one name in one request are one domain twice.
    const twice = await call("CreateInstance", { instance: instanceJson([free, free.toUpperCase()]) });
    expect(twice.ok, JSON.stringify(twice)).toBe(false);
    expect([Code.InvalidArgument, Code.AlreadyExists], JSON.stringify(twice)).toContain((twice as { code: Code }).code);
    // Nothing of the refused requests was created: the free domain is still free.
    failed(await at(USERS, "grpc", free, port).call("SearchUsers", {}), Code.NotFound, "free domain unserved");
    const other = await createInstance(sys(), server.adminToken, [free]);
    failed(await call("AddInstanceDomain", { id: other.id, domain: { domain: taken } }), Code.AlreadyExists, "add another's domain");
    failed(
      await call("AddInstanceDomain", { id: other.id, domain: { domain: taken.toUpperCase() } }),
      Code.AlreadyExists,
      "add another's domain in upper case",
    );
    failed(await call("AddInstanceDomain", { id: other.id, domain: { domain: free } }), Code.AlreadyExists, "add its own domain again");
    // The taken domain still serves its owner.
    const got = ok(await at(INSTANCES, "grpc", taken, port).call("GetInstance", { id: owner.id }, owner.adminPat));
    expect(got.instance.details.id).toBe(owner.id);
  });

  it("adds, sets primary and removes domains, and the Host lookup follows each change at once", async () => {
    const first = uniqueDomain("life-dom-a");
    const second = uniqueDomain("life-dom-b");
    const created = await createInstance(sys(), server.adminToken, [first]);
    const on = (host: string) => at(INSTANCES, "grpc", host, port);
    const served = async (host: string) => {
      const r = await on(host).call("GetInstance", { id: created.id }, created.adminPat);
      return r.ok ? "ok" : Code[r.code];
    };
    expect(await served(first)).toBe("ok");
    expect(await served(second)).toBe("NotFound");

    const before = await getInstance(created.id);
    const added = ok(
      await at(INSTANCES, "rest", "localhost", port).call("AddInstanceDomain", { id: created.id, domain: { domain: second.toUpperCase() } }, server.adminToken),
    );
    expect(added.details.sequence).toBe(String(Number(before.details.sequence) + 1));
    expect(await served(second)).toBe("ok");
    let instance = await getInstance(created.id);
    expect(instance.domains.map((d: Msg) => [d.domain, Boolean(d.isPrimary)])).toEqual([
      [first, true],
      [second, false],
    ]);

    // The primary cannot be removed.
    const refused = failed(await call("RemoveInstanceDomain", { id: created.id, domain: first }), Code.FailedPrecondition);
    expect(refused.message).toContain(first);
    ok(await call("SetPrimaryInstanceDomain", { id: created.id, domain: second }));
    instance = await getInstance(created.id);
    expect(instance.domains.map((d: Msg) => [d.domain, Boolean(d.isPrimary)])).toEqual([
      [second, true],
      [first, false],
    ]);
    // Setting the primary again changes nothing.
    const again = ok(await call("SetPrimaryInstanceDomain", { id: created.id, domain: second }));
    expect(again.details.sequence).toBe(instance.details.sequence);
    // New organizations get a domain under the new primary.
    const org = ok(await at(ORGS, "grpc", first, port).call("CreateOrganization", { organization: { name: "After Move" } }, created.adminPat));
    expect(org.primaryDomain).toBe(`after-move.${second}`);

    // Remove the old primary: its host stops serving at once (it was just looked up).
    expect(await served(first)).toBe("ok");
    ok(await call("RemoveInstanceDomain", { id: created.id, domain: first.toUpperCase() }));
    const gone = failed(await on(first).call("GetInstance", { id: created.id }, created.adminPat), Code.NotFound);
    expect(gone.message).toContain(first);
    expect(await served(second)).toBe("ok");
    failed(await call("RemoveInstanceDomain", { id: created.id, domain: first }), Code.NotFound, "remove again");
    failed(await call("SetPrimaryInstanceDomain", { id: created.id, domain: first }), Code.NotFound, "primary of a removed domain");
    failed(await call("RemoveInstanceDomain", { id: created.id, domain: second }), Code.FailedPrecondition, "the new primary");

    // The freed domain can serve another instance at once; the old token does not work there.
    const next = await createInstance(sys(), server.adminToken, [uniqueDomain("life-dom-c")]);
    ok(await call("AddInstanceDomain", { id: next.id, domain: { domain: first } }));
    const there = ok(await on(first).call("GetInstance", { id: next.id }, next.adminPat));
    expect(there.instance.details.id).toBe(next.id);
    failed(await on(first).call("GetInstance", { id: created.id }, created.adminPat), Code.Unauthenticated, "the old instance's token on the moved domain");
    // Unknown instance: NotFound.
    failed(await call("AddInstanceDomain", { id: "no-such-instance", domain: { domain: uniqueDomain("x") } }), Code.NotFound);
    failed(await call("SetPrimaryInstanceDomain", { id: "no-such-instance", domain: second }), Code.NotFound);
  });

  it("deletes an instance: hosts, tokens and every projection row go at once, events stay, domains are reusable", async () => {
    const main = uniqueDomain("life-del");
    const extra = uniqueDomain("life-del-extra");
    const created = await createInstance(sys(), server.adminToken, [main, extra], {
      admin: { user: humanAdmin("deladmin"), patExpirationDate: fromNow(DAY_MS) },
    });
    // Give it data in every kind of table: users, keys, secrets, tokens, orgs, domains, memberships, targets, executions, features.
    const users = at(USERS, "grpc", main, port);
    const machine = (await must(users.call("CreateUser", { user: { username: "svc", machine: { name: "svc" } } }, created.adminPat), "machine")).details
      .id as string;
    await must(users.call("AddKey", { id: machine, key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(DAY_MS) } }, created.adminPat), "key");
    await must(users.call("GenerateSecret", { id: machine }, created.adminPat), "secret");
    const machinePat = (await must(users.call("AddPersonalAccessToken", { id: machine, pat: { expirationDate: fromNow(DAY_MS) } }, created.adminPat), "pat"))
      .token as string;
    const org = (
      await must(at(ORGS, "grpc", main, port).call("CreateOrganization", { organization: { name: "Doomed Org", admins: [machine] } }, created.adminPat), "org")
    ).details.id as string;
    const actions = at(PlatformActions, "grpc", main, port);
    const target = (
      await must(actions.call("CreateTarget", { target: { name: "doomed", restWebhook: { url: "https://example.com/hook" } } }, created.adminPat), "target")
    ).details.id as string;
    await must(actions.call("PutExecution", { execution: { condition: { function: "preuserinfo" }, targets: [target] } }, created.adminPat), "execution");
    const schemaId = (
      await must(
        at(PlatformUserSchemas, "grpc", main, port).call(
          "CreateUserSchema",
          { userSchema: { type: "doomed", schema: { type: "object", properties: { team: { type: "string", "urn:platform:searchable": true } } } } },
          created.adminPat,
        ),
        "user schema",
      )
    ).details.id as string;
    await must(
      users.call("CreateUser", { user: { username: "schema-user", schema: { schemaId, data: { team: "doomed" } } } }, created.adminPat),
      "schema user",
    );

    // Warm every cache: hosts and both tokens have just been used.
    for (const [host, token] of [
      [main, created.adminPat],
      [extra, machinePat],
    ] as const) {
      ok(await at(USERS, "grpc", host, port).call("GetUser", { id: machine }, token), `warm ${host}`);
    }
    const db = server.service.store.db;
    const { rows: tables } = await sql<{ table_name: string }>`
      select table_name from information_schema.columns
      where column_name = 'instance_id' and table_schema = current_schema()
      order by table_name`.execute(db);
    const tableNames = tables.map((t) => t.table_name);
    expect(tableNames).toEqual(
      expect.arrayContaining([
        "events",
        "instances",
        "instance_domains",
        "orgs",
        "org_domains",
        "users",
        "personal_access_tokens",
        "memberships",
        "targets",
        "executions",
        "user_schemas",
        "user_search_values",
      ]),
    );
    const rowsOf = async () => {
      const counts: Record<string, number> = {};
      for (const table of tableNames) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where instance_id = ${created.id}`.execute(db);
        counts[table] = Number(rows[0]!.n);
      }
      return counts;
    };
    const before = await rowsOf();
    for (const table of [
      "instances",
      "instance_domains",
      "orgs",
      "org_domains",
      "users",
      "user_keys",
      "user_secrets",
      "personal_access_tokens",
      "memberships",
      "targets",
      "executions",
      "user_schemas",
      "user_search_values",
      "events",
    ]) {
      expect(before[table], `${table} has rows of the instance before`).toBeGreaterThan(0);
    }
    const eventsBefore = before.events!;

    const deleted = ok(await at(INSTANCES, "rest", "localhost", port).call("DeleteInstance", { id: created.id }, server.adminToken));
    expect(deleted.details).toMatchObject({ id: created.id, resourceOwner: { type: "OWNER_TYPE_SYSTEM" } });

    // Its hosts are unknown at once, on every protocol, with or without its tokens.
    for (const protocol of PROTOCOLS) {
      for (const [host, token] of [
        [main, created.adminPat],
        [extra, machinePat],
        [main, undefined],
      ] as const) {
        const r = await at(USERS, protocol, host, port).call("GetUser", { id: machine }, token);
        const gone = failed(r, Code.NotFound, `${protocol} ${host}`);
        expect(gone.message).toContain(`no instance serves the host "${host}"`);
      }
    }
    // Its tokens are unknown everywhere else too.
    failed(await at(USERS, "grpc", "localhost", port).call("SearchUsers", {}, created.adminPat), Code.Unauthenticated);
    // It is gone from the API.
    failed(await call("GetInstance", { id: created.id }), Code.NotFound);
    const search = ok(await call("SearchInstances", { filters: [{ inIds: { ids: [created.id] } }] }));
    expect(search.result ?? []).toEqual([]);
    failed(await call("DeleteInstance", { id: created.id }), Code.NotFound, "delete again");
    failed(await call("Limit", { id: created.id, limits: { block: true } }), Code.NotFound, "limit a deleted instance");

    // Every table with an instance_id has no row of it, but events, which all stayed (and one more).
    const after = await rowsOf();
    for (const table of tableNames) {
      if (table === "events") continue;
      expect(after[table], `${table} rows of the deleted instance`).toBe(0);
    }
    expect(after.events).toBe(eventsBefore + 1);
    const last = await db
      .selectFrom("events")
      .select(["event_type", "aggregate_id"])
      .where("instance_id", "=", created.id)
      .orderBy("position", "desc")
      .limit(1)
      .executeTakeFirstOrThrow();
    expect(last).toEqual({ event_type: "instance.removed", aggregate_id: created.id });

    // The domains are free again: a new instance takes them, and the old tokens do not work there.
    const reborn = await createInstance(sys(), server.adminToken, [extra, main], {
      admin: { user: humanAdmin("deladmin"), patExpirationDate: fromNow(DAY_MS) },
    });
    expect(reborn.id).not.toBe(created.id);
    for (const token of [created.adminPat, machinePat]) {
      failed(await at(USERS, "grpc", main, port).call("SearchUsers", {}, token), Code.Unauthenticated, "old token on the reused domain");
    }
    const fresh = ok(await at(USERS, "grpc", main, port).call("SearchUsers", {}, reborn.adminPat));
    expect((fresh.result as Msg[]).map((u) => u.username)).toEqual(["deladmin"]);
    const orgs = ok(await at(ORGS, "grpc", main, port).call("SearchOrganizations", {}, reborn.adminPat));
    expect((orgs.result as Msg[]).map((o) => o.details.id)).not.toContain(org);
    const targets = ok(await at(PlatformActions, "grpc", main, port).call("SearchTargets", {}, reborn.adminPat));
    expect(targets.result ?? []).toEqual([]);
  });

  it("moves SearchInstances' processedSequence with every instance created or deleted, from whichever instance", async () => {
    const processed = async () =>
      BigInt(String(((await must(call("SearchInstances", { query: { limit: 1 } }), "search")).details as Msg).processedSequence ?? "0"));
    const start = await processed();
    const created = await createInstance(sys(), server.adminToken, [uniqueDomain("life-seq")], {});
    const afterCreate = await processed();
    expect(afterCreate).toBeGreaterThan(start);
    await must(call("DeleteInstance", { id: created.id }), "delete");
    expect(await processed()).toBeGreaterThan(afterCreate);
  });

  it("refuses to delete the caller's own instance (FailedPrecondition) and keeps it working", async () => {
    for (const protocol of PROTOCOLS) {
      failed(
        await at(INSTANCES, protocol, "localhost", port).call("DeleteInstance", { id: server.instanceId }, server.adminToken),
        Code.FailedPrecondition,
        protocol,
      );
    }
    // Also with the system context.
    failed(await call("DeleteInstance", { id: server.instanceId, ctx: { system: true } }), Code.FailedPrecondition, "ctx.system");
    expect((await getInstance(server.instanceId)).state).toBe("INSTANCE_STATE_ACTIVE");
    ok(await at(USERS, "grpc", "localhost", port).call("SearchUsers", {}, server.adminToken));
    failed(await call("DeleteInstance", { id: "no-such-instance" }), Code.NotFound);

    // A system member of another instance may delete this one: refused only for one's own.
    const home = uniqueDomain("life-home");
    const other = await createInstance(sys(), server.adminToken, [home]);
    const member = await server.createUser({ instanceId: other.id, roles: [{ context: "system", contextId: "", roles: ["SYSTEM_OWNER"] }] });
    failed(await at(INSTANCES, "grpc", home, port).call("DeleteInstance", { id: other.id }, member.token), Code.FailedPrecondition, "its own, from its host");
    const victim = await createInstance(sys(), server.adminToken, [uniqueDomain("life-victim")]);
    ok(await at(INSTANCES, "grpc", home, port).call("DeleteInstance", { id: victim.id }, member.token), "another one, from its host");
  });
});
