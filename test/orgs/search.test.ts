import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage, listDetails, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";

type Key = string | number | boolean;

interface Org {
  id: string;
  name: string;
  created: number;
  changed: number;
  state: "active" | "inactive";
  primary: string;
}
interface Dom {
  domain: string;
  orgId: string;
  created: number;
  primary: boolean;
  verified: boolean;
  generated: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Names whose byte order differs from their case-insensitive order, from their creation order
 * and from the order of their generated domains (where "-" sorts before letters).
 */
const NAMES = [
  "srt Kilo",
  "SRT echo",
  "srt-Lima",
  "srtAlfa",
  "Srt hotel",
  "srt bravo",
  "SRTjuliett",
  "srt_delta",
  "srt india",
  "sRT golf",
  "srt Charlie",
  "srtfoxtrot",
];
const DEACTIVATED = [2, 7, 10];
const FRUITS = ["Fruit-Apple", "fruit-apricot", "Fruit-Banana", "other-apple-FRUIT"];
const LIKES = ["pct%lit", "pctXlit", "usc_lit", "uscXlit", "bs\\lit", "bsXlit"];

const orgIds = (m: Msg): string[] => (m.result ?? []).map((r: Msg) => r.details.id);
const domainNames = (m: Msg): string[] => (m.result ?? []).map((r: Msg) => r.domain);
/** Byte-wise for ASCII, as collate "C". */
const cmp = (a: Key, b: Key) => (a < b ? -1 : a > b ? 1 : 0);
const orgsBy = (orgs: Org[], key: (o: Org) => Key) => [...orgs].sort((a, b) => cmp(key(a), key(b)) || cmp(a.id, b.id)).map((o) => o.id);
const domainsBy = (domains: Dom[], key: (d: Dom) => Key) => [...domains].sort((a, b) => cmp(key(a), key(b)) || cmp(a.domain, b.domain)).map((d) => d.domain);

describe.each(DATABASE_KINDS)("searching organizations and domains (%s)", (kind) => {
  let server: TestServer;
  /** Every organization of the instance, the default included, in creation order. */
  const all: Org[] = [];
  /** The twelve NAMES organizations. */
  const made: Org[] = [];
  /** Every domain of the instance. */
  const domains: Dom[] = [];
  let clock = 0;
  const call = (svc: "orgs" | "domains", method: string, req: JsonObject, p: Protocol = "grpc") =>
    protocolClient(svc === "orgs" ? PlatformOrganizations : PlatformDomains, p, server.baseUrl).call(method, req, server.adminToken);
  const searchOrgs = async (req: JsonObject, p: Protocol = "grpc") => okMessage(await call("orgs", "SearchOrganizations", req, p));
  const searchDomains = async (req: JsonObject, p: Protocol = "grpc") => okMessage(await call("domains", "SearchDomains", req, p));
  const inMade = () => ({ inIds: { ids: made.map((o) => o.id) } });
  const org = (i: number) => made[i]!;

  async function createOrg(name: string): Promise<Org> {
    const created = okMessage(await call("orgs", "CreateOrganization", { organization: { name } }));
    const o: Org = { id: created.details.id, name, created: ++clock, changed: clock, state: "active", primary: created.primaryDomain };
    all.push(o);
    domains.push({ domain: o.primary, orgId: o.id, created: clock, primary: true, verified: true, generated: true });
    await sleep(3);
    return o;
  }

  async function addDomain(o: Org, domain: string): Promise<Dom> {
    okMessage(await call("domains", "AddDomain", { domain: { domain }, ctx: { orgId: o.id } }));
    const d: Dom = { domain: domain.toLowerCase(), orgId: o.id, created: ++clock, primary: false, verified: false, generated: false };
    o.changed = clock;
    domains.push(d);
    await sleep(3);
    return d;
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    const dflt = okMessage(await call("orgs", "GetInstanceDefault", {})).organization;
    all.push({ id: dflt.details.id, name: dflt.name, created: 0, changed: 0, state: "active", primary: dflt.primaryDomain });
    domains.push({ domain: dflt.primaryDomain, orgId: dflt.details.id, created: 0, primary: true, verified: true, generated: true });
    for (const name of NAMES) made.push(await createOrg(name));
    for (const i of DEACTIVATED) {
      okMessage(await call("orgs", "DeactivateOrganization", { id: org(i).id }));
      org(i).state = "inactive";
      org(i).changed = ++clock;
      await sleep(3);
    }
    okMessage(await call("orgs", "PatchOrganization", { id: org(5).id, organization: { name: "srt Bravo2" } }));
    org(5).name = "srt Bravo2";
    org(5).changed = ++clock;
    await sleep(3);
    // Org 3 gets a primary domain that is not verified; org 8 and org 0 get more domains.
    const extra = await addDomain(org(3), "ZZ-srt-extra.example");
    okMessage(await call("domains", "SetAsPrimary", { domain: extra.domain }));
    for (const d of domains.filter((d) => d.orgId === org(3).id)) d.primary = d === extra;
    org(3).primary = extra.domain;
    org(3).changed = ++clock;
    await sleep(3);
    await addDomain(org(8), "aa-srt-second.example");
    await addDomain(org(0), "mm-srt.example");
    await addDomain(org(0), "Srt-Upper.Example");
    for (const name of [...FRUITS, ...LIKES]) await createOrg(name);
  });
  afterAll(() => server?.close());

  describe("SearchOrganizations paging", () => {
    it("returns the newest first by default, ascending with asc", async () => {
      const byCreation = made.map((o) => o.id);
      const desc = await searchOrgs({ filters: [inMade()] });
      expect(orgIds(desc)).toEqual([...byCreation].reverse());
      expect(desc.sortingColumn).toBeUndefined();
      expect(listDetails(desc)).toMatchObject({ appliedLimit: 100, totalResult: 12, endOfList: true });
      expect(orgIds(await searchOrgs({ query: { asc: true }, filters: [inMade()] }))).toEqual(byCreation);
    });

    it("searches every organization of the instance, the default included, when no filter is given", async () => {
      const found = await searchOrgs({ query: { limit: 1000 } });
      expect(orgIds(found)).toEqual(all.map((o) => o.id).reverse());
      expect(listDetails(found)).toMatchObject({ totalResult: all.length, endOfList: true, appliedLimit: 1000 });
      const byId = new Map(found.result.map((r: Msg) => [r.details.id, r]));
      for (const o of all) {
        expect(byId.get(o.id), o.name).toMatchObject({
          name: o.name,
          state: o.state === "active" ? "ORGANIZATION_STATE_ACTIVE" : "ORGANIZATION_STATE_INACTIVE",
          primaryDomain: o.primary,
          details: { resourceOwner: { type: "OWNER_TYPE_INSTANCE", id: server.instanceId } },
        });
        expect(Boolean((byId.get(o.id) as Msg).isDefault), o.name).toBe(o === all[0]);
      }
    });

    it("pages with limit and offset, reporting total_result and end_of_list on every page and past the end", async () => {
      const expected = made.map((o) => o.id).reverse();
      const page = (offset: number, p: Protocol = "grpc") => searchOrgs({ query: { limit: 5, offset: String(offset) }, filters: [inMade()] }, p);
      for (const p of ["grpc", "rest"] as const) {
        const first = await page(0, p);
        expect(orgIds(first), p).toEqual(expected.slice(0, 5));
        expect(listDetails(first), p).toMatchObject({ appliedLimit: 5, totalResult: 12, endOfList: false });
        const middle = await page(5, p);
        expect(orgIds(middle), p).toEqual(expected.slice(5, 10));
        expect(listDetails(middle), p).toMatchObject({ appliedLimit: 5, totalResult: 12, endOfList: false });
        const last = await page(10, p);
        expect(orgIds(last), p).toEqual(expected.slice(10));
        expect(listDetails(last), p).toMatchObject({ totalResult: 12, endOfList: true });
        for (const offset of [12, 13, 50]) {
          const past = await page(offset, p);
          expect(orgIds(past), `${p} ${offset}`).toEqual([]);
          expect(listDetails(past), `${p} ${offset}`).toMatchObject({ totalResult: 12, endOfList: true });
          expect(listDetails(past).processedSequence).toBeGreaterThan(0n);
        }
      }
      expect(listDetails(await searchOrgs({ query: { limit: 12 }, filters: [inMade()] }))).toMatchObject({ totalResult: 12, endOfList: true });
      expect(listDetails(await searchOrgs({ query: { limit: 11 }, filters: [inMade()] }))).toMatchObject({ totalResult: 12, endOfList: false });
      const none = await searchOrgs({ query: { offset: "3" }, filters: [{ name: { name: "no such org" } }] });
      expect(listDetails(none)).toMatchObject({ totalResult: 0, endOfList: true });
    });

    it("applies 100 when no limit or limit 0 is given, 1000 at most, and rejects 1001", async () => {
      expect(listDetails(await searchOrgs({})).appliedLimit).toBe(100);
      expect(listDetails(await searchOrgs({ query: { limit: 0, offset: "0" } })).appliedLimit).toBe(100);
      expect(listDetails(await searchOrgs({ query: { limit: 1000 } })).appliedLimit).toBe(1000);
      expect(await call("orgs", "SearchOrganizations", { query: { limit: 1001 } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await call("orgs", "SearchOrganizations", { query: { limit: 1001 } }, "rest")).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
        httpStatus: 400,
      });
    });

    it("reports a processed_sequence that grows with each organization write, domain writes included", async () => {
      const before = listDetails(await searchOrgs({}));
      expect(before.processedSequence).toBeGreaterThan(0n);
      expect(Number.isNaN(Date.parse(before.timestamp ?? ""))).toBe(false);
      const probe = okMessage(await call("orgs", "CreateOrganization", { organization: { name: "seqprobe" } }));
      const afterCreate = listDetails(await searchOrgs({}));
      expect(afterCreate.processedSequence).toBeGreaterThan(before.processedSequence);
      expect(Date.parse(afterCreate.timestamp!)).toBeGreaterThanOrEqual(Date.parse(before.timestamp!));
      await sleep(3);
      okMessage(await call("domains", "AddDomain", { domain: { domain: "seqprobe.example" }, ctx: { orgId: probe.details.id } }));
      const afterDomain = listDetails(await searchOrgs({}));
      expect(afterDomain.processedSequence).toBeGreaterThan(afterCreate.processedSequence);
      expect(listDetails(await searchDomains({})).processedSequence).toBe(afterDomain.processedSequence);
      okMessage(await call("orgs", "DeleteOrganization", { id: probe.details.id }));
      const afterDelete = listDetails(await searchOrgs({}));
      expect(afterDelete.processedSequence).toBeGreaterThan(afterDomain.processedSequence);
      expect(afterDelete.totalResult).toBe(before.totalResult);
    });
  });

  describe("SearchOrganizations sorting", () => {
    const columns: [string, (o: Org) => Key][] = [
      ["ORGANIZATION_FIELD_NAME_ID", (o) => o.id],
      ["ORGANIZATION_FIELD_NAME_CREATION_DATE", (o) => o.created],
      ["ORGANIZATION_FIELD_NAME_CHANGE_DATE", (o) => o.changed],
      ["ORGANIZATION_FIELD_NAME_NAME", (o) => o.name],
      ["ORGANIZATION_FIELD_NAME_STATE", (o) => (o.state === "active" ? 1 : 2)],
      ["ORGANIZATION_FIELD_NAME_PRIMARY_DOMAIN", (o) => o.primary],
    ];

    it("has a model where every column but the id (time-ordered, like the creation date) orders differently", () => {
      const orders = columns.filter(([c]) => c !== "ORGANIZATION_FIELD_NAME_ID").map(([, key]) => orgsBy(made, key).join());
      expect(new Set(orders).size).toBe(columns.length - 1);
    });

    it.each(columns)("orders by %s in both directions, ties by id in the same direction", async (column, key) => {
      const asc = await searchOrgs({ query: { asc: true }, sortingColumn: column, filters: [inMade()] });
      expect(asc.sortingColumn).toBe(column);
      expect(orgIds(asc)).toEqual(orgsBy(made, key));
      const desc = await searchOrgs({ sortingColumn: column, filters: [inMade()] });
      expect(desc.sortingColumn).toBe(column);
      expect(orgIds(desc)).toEqual(orgsBy(made, key).reverse());
    });

    it("sorts names byte-wise: upper case before lower case, not alphabetically", async () => {
      const names = (await searchOrgs({ query: { asc: true }, sortingColumn: "ORGANIZATION_FIELD_NAME_NAME", filters: [inMade()] })).result.map(
        (r: Msg) => r.name,
      );
      expect(names.slice(0, 3)).toEqual(["SRT echo", "SRTjuliett", "Srt hotel"]);
      expect(names.at(-1)).toBe("srtfoxtrot");
    });

    it("pages a sorted search without gaps or repeats", async () => {
      const expected = orgsBy(made, (o) => (o.state === "active" ? 1 : 2));
      const seen: string[] = [];
      for (let offset = 0; offset < 12; offset += 5) {
        seen.push(
          ...orgIds(
            await searchOrgs({ query: { asc: true, limit: 5, offset: String(offset) }, sortingColumn: "ORGANIZATION_FIELD_NAME_STATE", filters: [inMade()] }),
          ),
        );
      }
      expect(seen).toEqual(expected);
    });

    it("takes query.limit, query.offset, query.asc and sortingColumn as REST query parameters", async () => {
      const rest = async (qs: string) => {
        const res = await fetch(`${server.baseUrl}/resources/v3alpha/organizations/_search?${qs}`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
          body: JSON.stringify([inMade()]),
        });
        expect(res.status).toBe(200);
        return (await res.json()) as Msg;
      };
      const byDomain = orgsBy(made, (o) => o.primary);
      const viaRest = await rest("query.limit=4&query.offset=2&query.asc=true&sortingColumn=ORGANIZATION_FIELD_NAME_PRIMARY_DOMAIN");
      expect(orgIds(viaRest)).toEqual(byDomain.slice(2, 6));
      expect(listDetails(viaRest)).toMatchObject({ appliedLimit: 4, totalResult: 12, endOfList: false });
      expect(viaRest.sortingColumn).toBe("ORGANIZATION_FIELD_NAME_PRIMARY_DOMAIN");
      const snake = await rest("query.asc=1&sorting_column=4");
      expect(orgIds(snake)).toEqual(orgsBy(made, (o) => o.name));
      expect(snake.sortingColumn).toBe("ORGANIZATION_FIELD_NAME_NAME");
      const client = await searchOrgs({ query: { limit: 3, offset: "9" }, sortingColumn: "ORGANIZATION_FIELD_NAME_CHANGE_DATE", filters: [inMade()] }, "rest");
      expect(orgIds(client)).toEqual(
        orgsBy(made, (o) => o.changed)
          .reverse()
          .slice(9),
      );
      expect(listDetails(client)).toMatchObject({ totalResult: 12, endOfList: true });
    });
  });

  describe("SearchOrganizations filters", () => {
    const names = (m: Msg): string[] => (m.result ?? []).map((r: Msg) => r.name).sort();
    const byName = (name: string, method: string) => searchOrgs({ filters: [{ name: { name, method: `TEXT_FILTER_METHOD_${method}` } }] });
    const byDomain = (domain: string, method: string) =>
      searchOrgs({ query: { asc: true }, filters: [{ domain: { domain, method: `TEXT_FILTER_METHOD_${method}` } }] });

    it.each([
      ["EQUALS", "Fruit-Apple", ["Fruit-Apple"]],
      ["EQUALS", "fruit-apple", []],
      ["EQUALS_IGNORE_CASE", "fruit-APPLE", ["Fruit-Apple"]],
      ["STARTS_WITH", "Fruit-", ["Fruit-Apple", "Fruit-Banana"]],
      ["STARTS_WITH_IGNORE_CASE", "fruit-a", ["Fruit-Apple", "fruit-apricot"]],
      ["CONTAINS", "apple", ["other-apple-FRUIT"]],
      ["CONTAINS_IGNORE_CASE", "APPLE", ["Fruit-Apple", "other-apple-FRUIT"]],
      ["ENDS_WITH", "FRUIT", ["other-apple-FRUIT"]],
      ["ENDS_WITH_IGNORE_CASE", "anANA", ["Fruit-Banana"]],
    ] as const)("name %s %j", async (method, value, expected) => {
      expect(names(await byName(value, method))).toEqual([...expected].sort());
    });

    it("treats an unspecified method as EQUALS", async () => {
      expect(names(await searchOrgs({ filters: [{ name: { name: "Fruit-Apple" } }] }))).toEqual(["Fruit-Apple"]);
      expect(names(await searchOrgs({ filters: [{ name: { name: "fruit-apple" } }] }))).toEqual([]);
    });

    it("matches %, _ and \\ in name filters literally", async () => {
      const cases: [string, string, string[]][] = [
        ["EQUALS", "pct%lit", ["pct%lit"]],
        ["EQUALS", "pct_lit", []],
        ["EQUALS_IGNORE_CASE", "USC_LIT", ["usc_lit"]],
        ["CONTAINS", "t%l", ["pct%lit"]],
        ["CONTAINS", "%", ["pct%lit"]],
        ["CONTAINS_IGNORE_CASE", "T%L", ["pct%lit"]],
        ["STARTS_WITH", "usc_", ["usc_lit"]],
        ["STARTS_WITH_IGNORE_CASE", "USC_", ["usc_lit"]],
        ["ENDS_WITH", "_lit", ["usc_lit"]],
        ["ENDS_WITH_IGNORE_CASE", "%LIT", ["pct%lit"]],
        ["CONTAINS", "s\\l", ["bs\\lit"]],
        ["STARTS_WITH", "bs\\", ["bs\\lit"]],
        ["ENDS_WITH_IGNORE_CASE", "\\LIT", ["bs\\lit"]],
        ["CONTAINS", "_", ["srt_delta", "usc_lit"]],
      ];
      for (const [method, value, expected] of cases) {
        expect(names(await byName(value, method)), `${method} ${value}`).toEqual(expected);
      }
    });

    it("matches any of an organization's domains, primary or not, and lists each organization once", async () => {
      const cases: [string, string, string[]][] = [
        ["EQUALS", "srt-kilo.localhost", [org(0).id]],
        ["EQUALS", "SRT-KILO.localhost", []],
        ["EQUALS_IGNORE_CASE", "SRT-KILO.LOCALHOST", [org(0).id]],
        ["EQUALS", "aa-srt-second.example", [org(8).id]],
        ["EQUALS", "srtalfa.localhost", [org(3).id]],
        ["STARTS_WITH", "zz-", [org(3).id]],
        ["STARTS_WITH_IGNORE_CASE", "SRT-UPPER", [org(0).id]],
        ["CONTAINS", "-srt", [org(0).id, org(3).id, org(8).id]],
        ["CONTAINS_IGNORE_CASE", "SRT-B", [org(5).id]],
        ["ENDS_WITH", ".example", [org(0).id, org(3).id, org(8).id]],
        ["ENDS_WITH_IGNORE_CASE", "SRT.EXAMPLE", [org(0).id]],
        // Host names have no %, _ or \: matched literally, these match nothing.
        ["CONTAINS", "srt_", []],
        ["STARTS_WITH", "srt%", []],
        ["CONTAINS", "%", []],
        ["ENDS_WITH", "\\", []],
        ["EQUALS_IGNORE_CASE", "srt_kilo.localhost", []],
      ];
      for (const [method, value, expected] of cases) {
        const found = await byDomain(value, method);
        expect(orgIds(found), `${method} ${value}`).toEqual(expected);
        expect(listDetails(found).totalResult, `${method} ${value}`).toBe(expected.length);
      }
      // Org 0 has three domains matching "srt": one row, counted once.
      const many = await searchOrgs({ filters: [{ domain: { domain: "srt", method: "TEXT_FILTER_METHOD_CONTAINS" } }, { inIds: { ids: [org(0).id] } }] });
      expect(orgIds(many)).toEqual([org(0).id]);
      expect(listDetails(many).totalResult).toBe(1);
    });

    it("filters by state", async () => {
      const inactive = await searchOrgs({ query: { asc: true }, filters: [{ state: { state: "ORGANIZATION_STATE_INACTIVE" } }] });
      expect(orgIds(inactive)).toEqual(DEACTIVATED.map((i) => org(i).id));
      const active = await searchOrgs({ query: { asc: true }, filters: [inMade(), { state: { state: "ORGANIZATION_STATE_ACTIVE" } }] });
      expect(orgIds(active)).toEqual(made.filter((o) => o.state === "active").map((o) => o.id));
      expect(listDetails(active).totalResult).toBe(9);
    });

    it("filters by in_ids, ignoring unknown ids, and combines filters with AND", async () => {
      const some = [org(0), org(4), org(7)];
      const found = await searchOrgs({ query: { asc: true }, filters: [{ inIds: { ids: [...some.map((o) => o.id), "no-such-id"] } }] });
      expect(orgIds(found)).toEqual(some.map((o) => o.id));
      expect(listDetails(found).totalResult).toBe(3);
      const both = await searchOrgs({
        query: { asc: true },
        filters: [
          { name: { name: "srt", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } },
          { inIds: { ids: [...some.map((o) => o.id), all.at(-1)!.id] } },
        ],
      });
      expect(orgIds(both)).toEqual(some.map((o) => o.id));
      const three = await searchOrgs({
        query: { asc: true },
        filters: [
          { name: { name: "srt", method: "TEXT_FILTER_METHOD_STARTS_WITH" } },
          { state: { state: "ORGANIZATION_STATE_INACTIVE" } },
          { domain: { domain: ".localhost", method: "TEXT_FILTER_METHOD_ENDS_WITH" } },
        ],
      });
      expect(orgIds(three)).toEqual([org(2).id, org(7).id, org(10).id]);
      const twoNames = await searchOrgs({
        query: { asc: true },
        filters: [
          { name: { name: "srt", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } },
          { name: { name: "o", method: "TEXT_FILTER_METHOD_ENDS_WITH" } },
        ],
      });
      expect(orgIds(twoNames)).toEqual(made.filter((o) => o.name.endsWith("o")).map((o) => o.id));
      expect(orgIds(await searchOrgs({ filters: [{ inIds: { ids: ["no-such-id"] } }] }))).toEqual([]);
    });
  });

  describe("SearchDomains", () => {
    const columns: [string, (d: Dom) => Key][] = [
      ["DOMAIN_FIELD_NAME_DOMAIN", (d) => d.domain],
      ["DOMAIN_FIELD_NAME_CREATION_DATE", (d) => d.created],
      ["DOMAIN_FIELD_NAME_PRIMARY", (d) => d.primary],
      ["DOMAIN_FIELD_NAME_VERIFIED", (d) => d.verified],
    ];
    const current = () => domains.filter((d) => all.some((o) => o.id === d.orgId));

    it("returns every domain of the instance, the newest first by default, with its details", async () => {
      const found = await searchDomains({ query: { limit: 1000 } });
      expect(domainNames(found)).toEqual(domainsBy(current(), (d) => d.created).reverse());
      expect(listDetails(found)).toMatchObject({ appliedLimit: 1000, totalResult: current().length, endOfList: true });
      expect(found.sortingColumn).toBeUndefined();
      const byName = new Map(found.result.map((r: Msg) => [r.domain, r]));
      for (const d of current()) {
        const row = byName.get(d.domain) as Msg;
        expect(row.details, d.domain).toMatchObject({ id: d.domain, resourceOwner: { type: "OWNER_TYPE_ORG", id: d.orgId } });
        expect([Boolean(row.isPrimary), Boolean(row.isVerified), Boolean(row.isGenerated)], d.domain).toEqual([d.primary, d.verified, d.generated]);
      }
      expect(listDetails(await searchDomains({ query: { asc: true } })).appliedLimit).toBe(100);
    });

    it("has a model where every column orders differently", () => {
      const orders = columns.map(([, key]) => domainsBy(current(), key).join());
      expect(new Set(orders).size).toBe(columns.length);
    });

    it.each(columns)("orders by %s in both directions, ties by domain name in the same direction", async (column, key) => {
      const asc = await searchDomains({ query: { asc: true }, sortingColumn: column });
      expect(asc.sortingColumn).toBe(column);
      expect(domainNames(asc)).toEqual(domainsBy(current(), key));
      const desc = await searchDomains({ sortingColumn: column });
      expect(domainNames(desc)).toEqual(domainsBy(current(), key).reverse());
      const viaRest = await searchDomains({ query: { asc: true, limit: 4, offset: "3" }, sortingColumn: column }, "rest");
      expect(domainNames(viaRest)).toEqual(domainsBy(current(), key).slice(3, 7));
    });

    it("pages with limit and offset, reporting total_result and end_of_list on every page and past the end", async () => {
      const expected = domainsBy(current(), (d) => d.domain);
      const total = expected.length;
      const seen: string[] = [];
      for (let offset = 0; offset < total; offset += 7) {
        const page = await searchDomains({ query: { asc: true, limit: 7, offset: String(offset) }, sortingColumn: "DOMAIN_FIELD_NAME_DOMAIN" });
        expect(listDetails(page), `offset ${offset}`).toMatchObject({ appliedLimit: 7, totalResult: total, endOfList: offset + 7 >= total });
        seen.push(...domainNames(page));
      }
      expect(seen).toEqual(expected);
      for (const offset of [total, total + 1, 1000]) {
        const past = await searchDomains({ query: { limit: 7, offset: String(offset) } });
        expect(domainNames(past)).toEqual([]);
        expect(listDetails(past)).toMatchObject({ totalResult: total, endOfList: true });
        expect(listDetails(past).processedSequence).toBeGreaterThan(0n);
      }
      const filteredPast = await searchDomains({ query: { offset: "5" }, filters: [{ primary: { isPrimary: false } }] });
      expect(listDetails(filteredPast)).toMatchObject({ totalResult: current().filter((d) => !d.primary).length, endOfList: true });
      expect(await call("domains", "SearchDomains", { query: { limit: 1001 } }, "rest")).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
        httpStatus: 400,
      });
    });

    it("limits the search to the organization of an organization context", async () => {
      const o3 = await searchDomains({ query: { asc: true }, sortingColumn: "DOMAIN_FIELD_NAME_DOMAIN", ctx: { orgId: org(3).id } });
      expect(domainNames(o3)).toEqual(["srtalfa.localhost", "zz-srt-extra.example"]);
      expect(listDetails(o3).totalResult).toBe(2);
      const byDomainCtx = await searchDomains(
        { query: { asc: true }, sortingColumn: "DOMAIN_FIELD_NAME_DOMAIN", ctx: { orgDomain: "SRT-UPPER.example" } },
        "rest",
      );
      expect(domainNames(byDomainCtx)).toEqual(["mm-srt.example", "srt-kilo.localhost", "srt-upper.example"]);
      const filtered = await searchDomains({ filters: [{ primary: { isPrimary: false } }], ctx: { orgId: org(0).id } });
      expect(domainNames(filtered).sort()).toEqual(["mm-srt.example", "srt-upper.example"]);
      expect(await call("domains", "SearchDomains", { ctx: { orgId: "no-such-org" } })).toMatchObject({ ok: false, code: Code.NotFound });
    });

    it("filters by domain text with every method, literally, and by primary and verified, combined with AND", async () => {
      const q = async (filters: JsonObject[]) =>
        domainNames(await searchDomains({ query: { asc: true, limit: 1000 }, sortingColumn: "DOMAIN_FIELD_NAME_DOMAIN", filters }));
      const text = (domain: string, method: string) => ({ domain: { domain, method: `TEXT_FILTER_METHOD_${method}` } });
      const cases: [string, string, string[]][] = [
        ["EQUALS", "mm-srt.example", ["mm-srt.example"]],
        ["EQUALS", "MM-srt.example", []],
        ["EQUALS_IGNORE_CASE", "MM-SRT.EXAMPLE", ["mm-srt.example"]],
        [
          "STARTS_WITH",
          "srt-",
          [
            "srt-bravo.localhost",
            "srt-charlie.localhost",
            "srt-delta.localhost",
            "srt-echo.localhost",
            "srt-golf.localhost",
            "srt-hotel.localhost",
            "srt-india.localhost",
            "srt-kilo.localhost",
            "srt-lima.localhost",
            "srt-upper.example",
          ],
        ],
        ["STARTS_WITH_IGNORE_CASE", "SRT-U", ["srt-upper.example"]],
        ["CONTAINS", "-srt", ["aa-srt-second.example", "mm-srt.example", "zz-srt-extra.example"]],
        ["CONTAINS_IGNORE_CASE", "SRT-SEC", ["aa-srt-second.example"]],
        ["ENDS_WITH", ".example", ["aa-srt-second.example", "mm-srt.example", "srt-upper.example", "zz-srt-extra.example"]],
        ["ENDS_WITH_IGNORE_CASE", "EXTRA.EXAMPLE", ["zz-srt-extra.example"]],
        ["CONTAINS", "srt_", []],
        ["STARTS_WITH", "srt%", []],
        ["CONTAINS", "%", []],
        ["CONTAINS", "_", []],
        ["ENDS_WITH", "\\", []],
        ["STARTS_WITH_IGNORE_CASE", "SRT_", []],
      ];
      for (const [method, value, expected] of cases) expect(await q([text(value, method)]), `${method} ${value}`).toEqual(expected);
      expect(await q([{ domain: { domain: "mm-srt.example" } }])).toEqual(["mm-srt.example"]);

      const sorted = (pred: (d: Dom) => boolean) => domainsBy(current().filter(pred), (d) => d.domain);
      expect(await q([{ primary: { isPrimary: true } }])).toEqual(sorted((d) => d.primary));
      expect(await q([{ primary: {} }])).toEqual(sorted((d) => !d.primary));
      expect(await q([{ verified: { isVerified: false } }])).toEqual(["aa-srt-second.example", "mm-srt.example", "srt-upper.example", "zz-srt-extra.example"]);
      expect(await q([{ verified: { isVerified: true } }])).toEqual(sorted((d) => d.verified));
      expect(await q([{ primary: { isPrimary: true } }, { verified: { isVerified: false } }])).toEqual(["zz-srt-extra.example"]);
      expect(await q([{ primary: { isPrimary: false } }, { verified: { isVerified: true } }])).toEqual(["srtalfa.localhost"]);
      expect(await q([{ primary: { isPrimary: true } }, { primary: { isPrimary: false } }])).toEqual([]);
      expect(await q([text("srt", "CONTAINS"), { verified: { isVerified: false } }, text(".example", "ENDS_WITH")])).toEqual([
        "aa-srt-second.example",
        "mm-srt.example",
        "srt-upper.example",
        "zz-srt-extra.example",
      ]);
    });

    it("reports a processed_sequence that grows with each domain write", async () => {
      const before = listDetails(await searchDomains({}));
      okMessage(await call("domains", "AddDomain", { domain: { domain: "seq.srt.example" }, ctx: { orgId: org(11).id } }));
      const added = listDetails(await searchDomains({}));
      expect(added.processedSequence).toBeGreaterThan(before.processedSequence);
      expect(added.totalResult).toBe(before.totalResult + 1);
      okMessage(await call("domains", "DeleteDomain", { domain: "seq.srt.example" }));
      const removed = listDetails(await searchDomains({}));
      expect(removed.processedSequence).toBeGreaterThan(added.processedSequence);
      expect(removed.totalResult).toBe(before.totalResult);
    });
  });
});
