import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Organization and domain writes append their events to the organization's aggregate and
 * update the projections in one transaction: races leave one consistent outcome, a failing
 * command leaves no trace, and a deletion takes the organization's domains, users and the
 * memberships in it along.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Msg = any;
const msg = (r: CallResult): Msg => {
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
  return (r as { message: Msg }).message;
};
const idOf = (r: CallResult): string => msg(r).details.id;
const seqOf = (r: CallResult): number => Number(msg(r).details.sequence);

describe.each(DATABASE_KINDS)("consistency of organization and domain writes (%s)", (kind) => {
  let server: TestServer;
  const db = () => server.service.store.db;
  const orgs = (p: Protocol = "grpc", base = server.baseUrl) => protocolClient(PlatformOrganizations, p, base);
  const domains = (p: Protocol = "grpc", base = server.baseUrl) => protocolClient(PlatformDomains, p, base);
  const o = (method: string, req: JsonObject, p: Protocol = "grpc", token = server.adminToken) => orgs(p).call(method, req, token);
  const d = (method: string, req: JsonObject, p: Protocol = "grpc", token = server.adminToken) => domains(p).call(method, req, token);

  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  async function createOrg(name: string, admins: string[] = []): Promise<{ id: string; domain: string }> {
    const created = await o("CreateOrganization", { organization: { name, admins } });
    return { id: idOf(created), domain: msg(created).primaryDomain };
  }

  async function snapshot() {
    const count = async (table: "events" | "orgs" | "org_domains" | "memberships" | "users") =>
      Number(
        (
          await db()
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return {
      events: await count("events"),
      orgs: await count("orgs"),
      domains: await count("org_domains"),
      memberships: await count("memberships"),
      users: await count("users"),
      orgRows: await db().selectFrom("orgs").select(["id", "name", "state", "sequence"]).orderBy("id").execute(),
      domainRows: await db().selectFrom("org_domains").select(["domain", "org_id", "is_primary", "sequence"]).orderBy("domain").execute(),
      defaultOrg: (await db().selectFrom("instances").select("default_org_id").where("id", "=", server.instanceId).executeTakeFirstOrThrow()).default_org_id,
    };
  }

  async function eventsOf(id: string) {
    return db()
      .selectFrom("events")
      .select(["sequence", "event_type"])
      .where("aggregate_type", "=", "org")
      .where("aggregate_id", "=", id)
      .orderBy("sequence")
      .execute();
  }

  /** Every organization's projection row, and each of its domains, carries the sequence of an event of it; the row the newest. */
  async function expectProjectionsMatchEvents() {
    const rows = await db().selectFrom("orgs").select(["id", "sequence"]).execute();
    for (const row of rows) {
      const events = await eventsOf(row.id);
      if (events.length === 0) continue; // the bootstrap's default organization may predate org events
      expect(
        events.map((e) => e.sequence),
        row.id,
      ).toEqual(events.map((_, i) => i + 1));
      expect(row.sequence, row.id).toBe(events.at(-1)!.sequence);
    }
    const primaries = await db().selectFrom("org_domains").select(["org_id"]).where("is_primary", "=", true).execute();
    expect(primaries.map((p) => p.org_id).sort()).toEqual(rows.map((r) => r.id).sort());
    const orphans = await db()
      .selectFrom("org_domains")
      .select("domain")
      .where(
        "org_id",
        "not in",
        rows.map((r) => r.id),
      )
      .execute();
    expect(orphans).toEqual([]);
  }

  it("records each write as events of the organization's aggregate, in step with the projections", async () => {
    const { id, domain } = await createOrg("Events Org");
    expect(await d("AddDomain", { domain: { domain: "events.example" }, ctx: { orgId: id } })).toMatchObject({ ok: true });
    expect(await d("SetAsPrimary", { domain: "events.example" })).toMatchObject({ ok: true });
    expect(await d("DeleteDomain", { domain })).toMatchObject({ ok: true });
    expect(await o("PatchOrganization", { id, organization: { name: "Events Org 2" } })).toMatchObject({ ok: true });
    expect(await o("DeactivateOrganization", { id })).toMatchObject({ ok: true });
    expect(await o("ReactivateOrganization", { id })).toMatchObject({ ok: true });
    await expectProjectionsMatchEvents();
    const before = await snapshot();
    expect(await o("DeleteOrganization", { id })).toMatchObject({ ok: true });
    expect((await eventsOf(id)).map((e) => e.event_type)).toEqual([
      "org.added",
      "org.domain.added",
      "org.domain.primary.set",
      "org.domain.added",
      "org.domain.primary.set",
      "org.domain.removed",
      "org.changed",
      "org.deactivated",
      "org.reactivated",
      "org.removed",
    ]);
    const after = await snapshot();
    expect(after.events).toBe(before.events + 1);
    expect(after.orgs).toBe(before.orgs - 1);
    expect(after.domains).toBe(before.domains - 1);
    await expectProjectionsMatchEvents();
  });

  describe("a failing command writes nothing", () => {
    let existing: { id: string; domain: string };
    let userId = "";
    beforeAll(async () => {
      existing = await createOrg("Failing Existing");
      userId = (await server.createUser({})).userId;
      expect(await d("AddDomain", { domain: { domain: "failing.example" }, ctx: { orgId: existing.id } })).toMatchObject({ ok: true });
    });

    const failures: [string, Code, number, RegExp, () => ["orgs" | "domains", string, JsonObject]][] = [
      [
        "CreateOrganization with a taken name in other case",
        Code.AlreadyExists,
        409,
        /failing existing/i,
        () => ["orgs", "CreateOrganization", { organization: { name: "FAILING EXISTING" } }],
      ],
      [
        "CreateOrganization with a known and an unknown admin",
        Code.NotFound,
        404,
        /missing-user/,
        () => ["orgs", "CreateOrganization", { organization: { name: "Failing New", admins: [userId, "missing-user"] } }],
      ],
      [
        "PatchOrganization onto a taken name",
        Code.AlreadyExists,
        409,
        /default/i,
        () => ["orgs", "PatchOrganization", { id: existing.id, organization: { name: "default" } }],
      ],
      ["DeleteOrganization of the default", Code.FailedPrecondition, 400, /default/, () => ["orgs", "DeleteOrganization", { id: server.defaultOrgId }]],
      ["DeactivateOrganization of the default", Code.FailedPrecondition, 400, /default/, () => ["orgs", "DeactivateOrganization", { id: server.defaultOrgId }]],
      ["ReactivateOrganization of an active one", Code.FailedPrecondition, 400, /active/, () => ["orgs", "ReactivateOrganization", { id: existing.id }]],
      [
        "AddDomain of another organization's domain",
        Code.AlreadyExists,
        409,
        /failing\.example/,
        () => ["domains", "AddDomain", { domain: { domain: "FAILING.example" } }],
      ],
      [
        "AddDomain of its own domain again",
        Code.AlreadyExists,
        409,
        /failing\.example/,
        () => ["domains", "AddDomain", { domain: { domain: "failing.example" }, ctx: { orgId: existing.id } }],
      ],
      [
        "AddDomain of another organization's generated domain",
        Code.AlreadyExists,
        409,
        /failing-existing\.localhost/,
        () => ["domains", "AddDomain", { domain: { domain: "failing-existing.localhost" } }],
      ],
      ["DeleteDomain of the primary domain", Code.FailedPrecondition, 400, /primary/, () => ["domains", "DeleteDomain", { domain: existing.domain }]],
      ["DeleteDomain of a missing domain", Code.NotFound, 404, /nothing\.example/, () => ["domains", "DeleteDomain", { domain: "nothing.example" }]],
    ];

    it.each(failures)("%s", async (_label, code, status, reason, request) => {
      const [svc, method, req] = request();
      for (const protocol of ["grpc", "rest"] as const) {
        const before = await snapshot();
        const result = await (svc === "orgs" ? o : d)(method, req, protocol);
        expect(result, protocol).toMatchObject({ ok: false, code });
        expect((result as { message: string }).message, protocol).toMatch(reason);
        if (protocol === "rest") expect(result.httpStatus).toBe(status);
        expect(await snapshot(), protocol).toEqual(before);
      }
      await expectProjectionsMatchEvents();
    });

    it("leaves the name of a CreateOrganization that failed on an admin free", async () => {
      const created = await createOrg("Failing New", [userId]);
      expect(created.domain).toBe("failing-new.localhost");
      const owner = await db()
        .selectFrom("memberships")
        .select(["user_id", "roles"])
        .where("context_type", "=", "org")
        .where("context_id", "=", created.id)
        .execute();
      expect(owner.map((m) => m.user_id)).toEqual([userId]);
      expect(JSON.stringify(owner[0]!.roles)).toContain("ORG_OWNER");
    });
  });

  describe("races between writers leave one consistent outcome", () => {
    it("lets exactly one of five concurrent creates of one name (in any case) win; the losers leave no event", async () => {
      const before = await snapshot();
      const names = ["Race Org", "race org", "RACE ORG", "Race org", "race Org"];
      const results = await Promise.all(names.map((name, i) => o("CreateOrganization", { organization: { name } }, i % 2 ? "grpc" : "rest")));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      for (const r of results.filter((r) => !r.ok)) expect(r).toMatchObject({ code: Code.AlreadyExists });
      const after = await snapshot();
      expect(after.orgs).toBe(before.orgs + 1);
      expect(after.domains).toBe(before.domains + 1);
      expect(after.events).toBe(before.events + 3);
      expect(msg(results.find((r) => r.ok)!).primaryDomain).toBe("race-org.localhost");
      await expectProjectionsMatchEvents();
    });

    // Distinct names whose generated labels collide: each must get its own "-n" suffix, also
    // when created at once (PostgreSQL runs them concurrently; PGlite one after another).
    it("gives concurrent creates of distinct names with one label each their own suffix", async () => {
      for (let round = 0; round < 5; round++) {
        const names = ["!", "?", "#", "$"].map((s) => `Label Race ${round}${s}`);
        const results = await Promise.all(names.map((name, i) => o("CreateOrganization", { organization: { name } }, i % 2 ? "grpc" : "rest")));
        for (const [i, r] of results.entries()) expect(r, `${names[i]}: ${JSON.stringify(r)}`).toMatchObject({ ok: true });
        const label = `label-race-${round}`;
        expect(results.map((r) => msg(r).primaryDomain).sort()).toEqual([
          `${label}-2.localhost`,
          `${label}-3.localhost`,
          `${label}-4.localhost`,
          `${label}.localhost`,
        ]);
      }
      await expectProjectionsMatchEvents();
    });

    it("lets exactly one of two organizations win a concurrent AddDomain of one domain", async () => {
      const a = await createOrg("Domain Race A");
      const b = await createOrg("Domain Race B");
      for (let round = 0; round < 3; round++) {
        const before = await snapshot();
        const domain = `race${round}.example`;
        const results = await Promise.all([
          d("AddDomain", { domain: { domain }, ctx: { orgId: a.id } }),
          d("AddDomain", { domain: { domain: domain.toUpperCase() }, ctx: { orgId: b.id } }, "rest"),
        ]);
        expect(
          results.filter((r) => r.ok),
          `round ${round}`,
        ).toHaveLength(1);
        expect(results.find((r) => !r.ok)).toMatchObject({ code: Code.AlreadyExists });
        const winner = results[0]!.ok ? a : b;
        const after = await snapshot();
        expect(after.events).toBe(before.events + 1);
        expect(after.domainRows.filter((r) => r.domain === domain)).toMatchObject([{ org_id: winner.id, is_primary: false }]);
        const loser = winner === a ? b : a;
        expect(after.orgRows.find((r) => r.id === loser.id)!.sequence).toBe(before.orgRows.find((r) => r.id === loser.id)!.sequence);
      }
      await expectProjectionsMatchEvents();
    });

    it("applies two concurrent renames of one organization, both, in sequence", async () => {
      const { id } = await createOrg("Rename Both");
      const [x, y] = await Promise.all([
        o("PatchOrganization", { id, organization: { name: "Rename Both X" } }),
        o("PatchOrganization", { id, organization: { name: "Rename Both Y" } }, "rest"),
      ]);
      expect([seqOf(x), seqOf(y)].sort()).toEqual([4, 5]);
      const last = seqOf(x) > seqOf(y) ? "Rename Both X" : "Rename Both Y";
      expect(msg(await o("GetOrganization", { id })).organization).toMatchObject({ name: last, details: { sequence: "5" } });
      expect((await eventsOf(id)).map((e) => e.event_type).slice(3)).toEqual(["org.changed", "org.changed"]);
      await expectProjectionsMatchEvents();
    });

    it("lets exactly one of two concurrent renames onto one free name win", async () => {
      const [x, y] = [await createOrg("Rename Onto X"), await createOrg("Rename Onto Y")];
      const before = await snapshot();
      const results = await Promise.all([x, y].map((org) => o("PatchOrganization", { id: org.id, organization: { name: "Rename Onto Both" } })));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.find((r) => !r.ok)).toMatchObject({ code: Code.AlreadyExists });
      const after = await snapshot();
      expect(after.events).toBe(before.events + 1);
      expect(after.orgRows.filter((r) => r.name.toLowerCase() === "rename onto both")).toHaveLength(1);
    });

    it("applies concurrent domain writes of one organization in sequence, leaving one primary", async () => {
      const { id } = await createOrg("Domain Burst");
      const names = Array.from({ length: 6 }, (_, i) => `burst${i}.example`);
      const added = await Promise.all(names.map((domain, i) => d("AddDomain", { domain: { domain }, ctx: { orgId: id } }, i % 2 ? "grpc" : "rest")));
      expect(added.map(seqOf).sort((a, b) => a - b)).toEqual([4, 5, 6, 7, 8, 9]);
      const primaries = await Promise.all(names.slice(0, 4).map((domain) => d("SetAsPrimary", { domain })));
      const seqs = primaries.map(seqOf);
      expect([...seqs].sort((a, b) => a - b)).toEqual([10, 11, 12, 13]);
      const lastPrimary = names[seqs.indexOf(13)]!;
      expect(msg(await o("GetOrganization", { id })).organization).toMatchObject({ primaryDomain: lastPrimary, details: { sequence: "13" } });
      const rows = (await snapshot()).domainRows.filter((r) => r.org_id === id);
      expect(rows.filter((r) => r.is_primary).map((r) => r.domain)).toEqual([lastPrimary]);
      await expectProjectionsMatchEvents();
    });

    it("never leaves an inactive default when SetAsInstanceDefault and DeactivateOrganization race", async () => {
      for (let round = 0; round < 4; round++) {
        const { id } = await createOrg(`Default Race ${round}`);
        const [set, deactivate] = await Promise.all([o("SetAsInstanceDefault", { id }), o("DeactivateOrganization", { id }, "rest")]);
        expect(set.ok !== deactivate.ok, `round ${round}: ${JSON.stringify([set, deactivate])}`).toBe(true);
        expect((set.ok ? deactivate : set) as CallResult).toMatchObject({ code: Code.FailedPrecondition });
        const state = await snapshot();
        const row = state.orgRows.find((r) => r.id === id)!;
        expect({ isDefault: state.defaultOrg === id, state: row.state }).toEqual(
          set.ok ? { isDefault: true, state: "active" } : { isDefault: false, state: "inactive" },
        );
        expect(msg(await o("SetAsInstanceDefault", { id: server.defaultOrgId })).details.id).toBe(server.instanceId);
      }
    });

    it("never deletes the default when SetAsInstanceDefault and DeleteOrganization race", async () => {
      for (let round = 0; round < 4; round++) {
        const { id } = await createOrg(`Default Delete Race ${round}`);
        const [set, del] = await Promise.all([o("SetAsInstanceDefault", { id }, "rest"), o("DeleteOrganization", { id })]);
        expect(set.ok !== del.ok, `round ${round}: ${JSON.stringify([set, del])}`).toBe(true);
        const state = await snapshot();
        if (set.ok) {
          expect(del).toMatchObject({ code: Code.FailedPrecondition });
          expect(state.defaultOrg).toBe(id);
          expect(msg(await o("SetAsInstanceDefault", { id: server.defaultOrgId })).details.id).toBe(server.instanceId);
        } else {
          expect(set).toMatchObject({ code: Code.NotFound });
          expect(state.defaultOrg).toBe(server.defaultOrgId);
          expect(state.orgRows.find((r) => r.id === id)).toBeUndefined();
        }
        expect(msg(await o("GetInstanceDefault", {})).organization.details.id).toBe(server.defaultOrgId);
      }
    });

    it("never leaves an organization without its one primary domain when SetAsPrimary and DeleteDomain race", async () => {
      const { id, domain: generated } = await createOrg("Primary Race");
      for (let round = 0; round < 4; round++) {
        const domain = `primrace${round}.example`;
        expect(await d("AddDomain", { domain: { domain }, ctx: { orgId: id } })).toMatchObject({ ok: true });
        const [set, del] = await Promise.all([d("SetAsPrimary", { domain }), d("DeleteDomain", { domain }, "rest")]);
        expect(set.ok !== del.ok, `round ${round}: ${JSON.stringify([set, del])}`).toBe(true);
        const rows = (await snapshot()).domainRows.filter((r) => r.org_id === id);
        const primary = rows.filter((r) => r.is_primary).map((r) => r.domain);
        if (set.ok) {
          expect(del).toMatchObject({ code: Code.FailedPrecondition, httpStatus: 400 });
          expect(primary).toEqual([domain]);
          expect(await d("SetAsPrimary", { domain: generated })).toMatchObject({ ok: true });
          expect(await d("DeleteDomain", { domain })).toMatchObject({ ok: true });
        } else {
          expect(set).toMatchObject({ code: Code.NotFound });
          expect(primary).toEqual([generated]);
        }
      }
      expect(msg(await o("GetOrganization", { id })).organization.primaryDomain).toBe(generated);
      await expectProjectionsMatchEvents();
    });

    it("takes a rename that only changes the case of its own name, and refuses that name to others", async () => {
      const { id } = await createOrg("Case Rename");
      const other = await createOrg("Case Other");
      expect(seqOf(await o("PatchOrganization", { id, organization: { name: "CASE rename" } }))).toBe(4);
      expect(msg(await o("GetOrganization", { id })).organization.name).toBe("CASE rename");
      expect(await o("PatchOrganization", { id: other.id, organization: { name: "case rename" } })).toMatchObject({ ok: false, code: Code.AlreadyExists });
      expect(await o("CreateOrganization", { organization: { name: "Case RENAME" } })).toMatchObject({ ok: false, code: Code.AlreadyExists });
    });

    it("never leaves a domain of an organization deleted while AddDomain ran", async () => {
      for (let round = 0; round < 4; round++) {
        const { id } = await createOrg(`Delete Race ${round}`);
        const [add, del] = await Promise.all([
          d("AddDomain", { domain: { domain: `delrace${round}.example` }, ctx: { orgId: id } }),
          o("DeleteOrganization", { id }, "rest"),
        ]);
        expect(del, `round ${round}`).toMatchObject({ ok: true });
        if (!add.ok) expect(add, `round ${round}`).toMatchObject({ code: Code.NotFound });
        expect((await snapshot()).domainRows.filter((r) => r.org_id === id)).toEqual([]);
      }
      await expectProjectionsMatchEvents();
    });
  });

  describe("DeleteOrganization takes its domains, its users and the memberships in it along", () => {
    it("frees its domains for other organizations and its name for a new one", async () => {
      const doomed = await createOrg("Doomed Domains");
      const other = await createOrg("Other Domains");
      expect(await d("AddDomain", { domain: { domain: "moving.example" }, ctx: { orgId: doomed.id } })).toMatchObject({ ok: true });
      expect(await d("AddDomain", { domain: { domain: "moving.example" }, ctx: { orgId: other.id } })).toMatchObject({ ok: false, code: Code.AlreadyExists });
      const before = await snapshot();
      expect(await o("DeleteOrganization", { id: doomed.id })).toMatchObject({ ok: true });
      const after = await snapshot();
      expect(after.domains).toBe(before.domains - 2);
      expect(after.domainRows.filter((r) => r.org_id === doomed.id)).toEqual([]);
      expect(msg(await d("SearchDomains", { filters: [{ domain: { domain: "doomed", method: "TEXT_FILTER_METHOD_CONTAINS" } }] })).result ?? []).toEqual([]);
      expect(await o("SearchOrganizations", { filters: [{ domain: { domain: "moving.example" } }] })).toMatchObject({ ok: true });
      expect(msg(await o("SearchOrganizations", { filters: [{ domain: { domain: "moving.example" } }] })).result ?? []).toEqual([]);
      // The domain, the generated one included, and the name are free again.
      expect(msg(await d("AddDomain", { domain: { domain: "moving.example" }, ctx: { orgId: other.id } })).details).toMatchObject({
        id: "moving.example",
        resourceOwner: { id: other.id },
      });
      expect(msg(await d("AddDomain", { domain: { domain: doomed.domain }, ctx: { orgId: other.id } })).details).toMatchObject({
        id: "doomed-domains.localhost",
      });
      expect(await d("DeleteDomain", { domain: doomed.domain })).toMatchObject({ ok: true });
      const again = await createOrg("doomed domains");
      expect(again.domain).toBe("doomed-domains.localhost");
      expect(again.id).not.toBe(doomed.id);
      await expectProjectionsMatchEvents();
    });

    it("removes the memberships in it: its owners lose access to it and keep the rest", async () => {
      const both = await server.createUser({});
      const only = await server.createUser({});
      const doomed = await createOrg("Doomed Members", [both.userId, only.userId]);
      const kept = await createOrg("Kept Members", [both.userId]);
      const read = (token: string, id: string) => o("GetOrganization", { id }, "grpc", token);
      const searchAs = (token: string) => o("SearchOrganizations", { query: { asc: true } }, "rest", token);
      expect(await read(both.token, doomed.id)).toMatchObject({ ok: true });
      expect(await read(only.token, doomed.id)).toMatchObject({ ok: true });
      expect((msg(await searchAs(both.token)).result as Msg[]).map((r) => r.details.id)).toEqual([doomed.id, kept.id]);
      expect(await d("AddDomain", { domain: { domain: "members.example" }, ctx: { orgId: doomed.id } }, "grpc", only.token)).toMatchObject({ ok: true });

      const before = await snapshot();
      expect(await o("DeleteOrganization", { id: doomed.id })).toMatchObject({ ok: true });
      const after = await snapshot();
      expect(after.memberships).toBe(before.memberships - 2);
      expect(after.users).toBe(before.users);
      const left = await db().selectFrom("memberships").select("user_id").where("context_type", "=", "org").where("context_id", "=", doomed.id).execute();
      expect(left).toEqual([]);

      // Who may read organizations elsewhere learns that it is gone; who may read none is refused.
      expect(await read(both.token, doomed.id)).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await read(both.token, kept.id)).toMatchObject({ ok: true });
      expect((msg(await searchAs(both.token)).result as Msg[]).map((r) => r.details.id)).toEqual([kept.id]);
      expect(await read(only.token, doomed.id)).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await searchAs(only.token)).toMatchObject({ ok: false, code: Code.PermissionDenied, httpStatus: 403 });
      expect(await d("SearchDomains", {}, "grpc", only.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
      // A new organization of the same name is not theirs.
      const reborn = await createOrg("Doomed Members");
      expect(await read(only.token, reborn.id)).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await read(both.token, reborn.id)).toMatchObject({ ok: false, code: Code.PermissionDenied });
    });

    it("locks out its users while deactivated and removes them with it", async () => {
      const home = await createOrg("Home Of Users");
      expect(await o("SetAsInstanceDefault", { id: home.id })).toMatchObject({ ok: true });
      // createUser puts users into the instance's default organization.
      const elsewhere = await createOrg("Elsewhere Of Users");
      const member = await server.createUser({
        roles: [
          { context: "org", contextId: home.id, roles: ["ORG_OWNER"] },
          { context: "org", contextId: elsewhere.id, roles: ["ORG_OWNER"] },
        ],
      });
      expect(await o("SetAsInstanceDefault", { id: server.defaultOrgId })).toMatchObject({ ok: true });
      const read = () => o("GetOrganization", { id: home.id }, "grpc", member.token);
      expect(await read()).toMatchObject({ ok: true });

      expect(await o("DeactivateOrganization", { id: home.id })).toMatchObject({ ok: true });
      expect(await read()).toMatchObject({ ok: false, code: Code.Unauthenticated });
      expect(await o("ReactivateOrganization", { id: home.id })).toMatchObject({ ok: true });
      expect(await read()).toMatchObject({ ok: true });

      const before = await snapshot();
      expect(await o("DeleteOrganization", { id: home.id })).toMatchObject({ ok: true });
      const after = await snapshot();
      expect(after.users).toBe(before.users - 1);
      expect(await db().selectFrom("users").select("id").where("id", "=", member.userId).execute()).toEqual([]);
      expect(await db().selectFrom("personal_access_tokens").select("id").where("user_id", "=", member.userId).execute()).toEqual([]);
      expect(await db().selectFrom("memberships").select("context_id").where("user_id", "=", member.userId).execute()).toEqual([]);
      expect(after.memberships).toBe(before.memberships - 2);
      expect(await read()).toMatchObject({ ok: false, code: Code.Unauthenticated });
    });
  });

  describe("generated domains", () => {
    it("derives the label from the name and suffixes a taken one with -2, -3…", async () => {
      expect(await d("AddDomain", { domain: { domain: "taken.localhost" } })).toMatchObject({ ok: true });
      const cases: [string, string][] = [
        ["Acme", "acme.localhost"],
        ["Acme!", "acme-2.localhost"],
        ["ACME?", "acme-3.localhost"],
        ["Acme 2", "acme-2-2.localhost"],
        ["  --Hello,   World!!--  ", "hello-world.localhost"],
        ["ÄÖÜ", "org.localhost"],
        ["!!!", "org-2.localhost"],
        ["Café Crème", "caf-cr-me.localhost"],
        ["Under_Score.And.Dots", "under-score-and-dots.localhost"],
        ["Taken", "taken-2.localhost"],
        [`${"Long".repeat(20)}`, `${"long".repeat(20).slice(0, 57)}.localhost`],
        [`${"Long".repeat(20)}!`, `${"long".repeat(20).slice(0, 57)}-2.localhost`],
        // Cut to 57 where the 57th character is a hyphen: no label ends with one.
        [`${"b".repeat(56)} tail`, `${"b".repeat(56)}.localhost`],
      ];
      for (const [name, domain] of cases) {
        const created = await o("CreateOrganization", { organization: { name } });
        expect(msg(created).primaryDomain, name).toBe(domain);
        const got = msg(await o("GetOrganization", { id: idOf(created) })).organization;
        expect(got.primaryDomain, name).toBe(domain);
        const search = msg(await d("SearchDomains", { ctx: { orgId: idOf(created) } })).result;
        expect(search, name).toEqual([
          { details: expect.objectContaining({ id: domain, sequence: "3" }), domain, isPrimary: true, isVerified: true, isGenerated: true },
        ]);
      }
      // A label freed by a deletion is taken again; a rename keeps the generated domain.
      const acme = msg(await o("SearchOrganizations", { filters: [{ name: { name: "Acme" } }] })).result[0];
      expect(await o("DeleteOrganization", { id: acme.details.id })).toMatchObject({ ok: true });
      expect((await createOrg("acme.")).domain).toBe("acme.localhost");
      const renamed = await createOrg("Before Rename");
      expect(await o("PatchOrganization", { id: renamed.id, organization: { name: "After Rename" } })).toMatchObject({ ok: true });
      expect(msg(await o("GetOrganization", { id: renamed.id })).organization.primaryDomain).toBe("before-rename.localhost");
    });

    it("keeps every generated label a valid DNS label of at most 57 characters", async () => {
      for (const name of [`-${"y".repeat(60)}`, `${"z".repeat(57)}-`, `${"q".repeat(30)}${"!".repeat(40)}${"q".repeat(30)}`]) {
        const { domain } = await createOrg(name);
        const label = domain.slice(0, -".localhost".length);
        expect(label, name).toMatch(/^[a-z0-9](?:[a-z0-9-]{0,55}[a-z0-9])?(?:-\d+)?$/);
        expect(label.replace(/-\d+$/, "").length, name).toBeLessThanOrEqual(57);
      }
    });

    it("generates domains per instance: the same name and domain may exist in two instances", async () => {
      const b = await server.createInstance("127.0.0.1");
      const inB = await orgs("grpc", b.baseUrl).call("CreateOrganization", { organization: { name: "Acme" } }, b.adminToken);
      expect(msg(inB)).toMatchObject({ primaryDomain: "acme.127.0.0.1", details: { resourceOwner: { type: "OWNER_TYPE_INSTANCE", id: b.instanceId } } });
      const shared = "shared-between.example";
      expect(await d("AddDomain", { domain: { domain: shared } })).toMatchObject({ ok: true });
      const addB = await domains("rest", b.baseUrl).call("AddDomain", { domain: { domain: shared } }, b.adminToken);
      expect(msg(addB).details).toMatchObject({ id: shared, resourceOwner: { type: "OWNER_TYPE_ORG", id: b.orgId } });
      const searchB = msg(
        await domains("grpc", b.baseUrl).call("SearchDomains", { query: { asc: true }, sortingColumn: "DOMAIN_FIELD_NAME_DOMAIN" }, b.adminToken),
      );
      expect(searchB.result.map((r: Msg) => r.domain)).toEqual(["acme.127.0.0.1", "default.127.0.0.1", shared]);
      const orgsB = msg(await orgs("grpc", b.baseUrl).call("SearchOrganizations", {}, b.adminToken));
      expect(orgsB.result.map((r: Msg) => r.name).sort()).toEqual(["Acme", "Default"]);
      // Instance A's admin cannot reach instance B's organization through A's host.
      expect(await o("GetOrganization", { id: idOf(inB) })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await d("DeleteDomain", { domain: shared })).toMatchObject({ ok: true });
      expect(msg(await domains("grpc", b.baseUrl).call("SearchDomains", { filters: [{ domain: { domain: shared } }] }, b.adminToken)).result).toHaveLength(1);
    });
  });

  // "Example.COM." is the same DNS name as "example.com": the trailing-dot form must not become a
  // second domain, so that one name belongs to two organizations (or twice to one).
  it("never lets the trailing-dot form of a domain belong to another organization", async () => {
    const a = await createOrg("Dot Owner A");
    const b = await createOrg("Dot Owner B");
    expect(await d("AddDomain", { domain: { domain: "dotted.example" }, ctx: { orgId: a.id } })).toMatchObject({ ok: true });
    const dotted = await d("AddDomain", { domain: { domain: "Dotted.Example." }, ctx: { orgId: b.id } });
    expect(dotted).toMatchObject({ ok: false });
  });
});
