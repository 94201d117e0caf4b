import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformFeatureSettings } from "../../gen/platform/settings/feature/v3alpha/feature_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  SUPPORTED,
  SYSTEM_OWNER,
  createOrg,
  details,
  failed,
  instanceOwner,
  langs,
  languageClient,
  ok,
  orgOwner,
  resolvedLanguages,
  LANGUAGES,
} from "./helpers.js";

const languageRaw = (server: TestServer) => protocolClient(LANGUAGES, "grpc", server.baseUrl);

/**
 * PlatformLanguageSettings: resolution org → instance → system → built-in default with the
 * owner of each value, partial writes and resets, the rules (InvalidArgument and
 * FailedPrecondition), a parent's change breaking a child's combination, Details.
 */

const RESET_ALL = { defaultLanguage: { key: "" }, restrictedLanguages: { languages: [] } };
const SUPPORTED_RESOLVED = { value: langs(...SUPPORTED), owner: SYSTEM_OWNER };

describe.each(DATABASE_KINDS)("PlatformLanguageSettings resolution and rules (%s)", (kind) => {
  let server: TestServer;
  let orgA: string;
  let orgB: string;
  let api: ReturnType<typeof languageClient>;
  let counter = 0;
  const token = () => server.adminToken;
  const inst = () => ({ instanceId: server.instanceId });
  const SYSTEM = { system: true };
  const org = (orgId: string) => ({ orgId });

  beforeAll(async () => {
    server = await startTestServer(kind);
    api = languageClient(server);
  });
  // Fresh organizations per test: their Details count from nothing.
  beforeEach(async () => {
    orgA = await createOrg(server, `Lang A ${++counter}`);
    orgB = await createOrg(server, `Lang B ${counter}`);
  });
  afterAll(() => server?.close());
  // Each test starts from nothing set in the instance and the system.
  afterEach(async () => {
    for (const ctx of [inst(), SYSTEM]) ok(await api.set(RESET_ALL, ctx, token()), `reset ${JSON.stringify(ctx)}`);
  });

  const resolve = async (ctx: object | undefined) => resolvedLanguages(ok(await api.resolve(ctx as never, token()), `resolve ${JSON.stringify(ctx)}`));

  it("resolves the built-in defaults everywhere when nothing is set, owned by the system", async () => {
    const builtIn = (owned: boolean) => ({
      defaultLanguage: { value: "en", ...(owned && { owner: SYSTEM_OWNER }) },
      restrictedLanguages: { value: [], ...(owned && { owner: SYSTEM_OWNER }) },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(await resolve(org(orgA))).toEqual(builtIn(true));
    expect(await resolve(inst())).toEqual(builtIn(true));
    expect(await resolve(undefined)).toEqual(builtIn(true));
    // In the system itself the built-in values are its own; the supported list always names it.
    expect(await resolve(SYSTEM)).toEqual(builtIn(false));
    const m = ok(await api.resolve(org(orgA), token()));
    expect(details(m)).toEqual({ sequence: 0, changeDate: undefined, owner: orgOwner(orgA) });
    expect(details(ok(await api.resolve(undefined, token())))).toEqual({ sequence: 0, changeDate: undefined, owner: instanceOwner(server.instanceId) });
    expect(details(ok(await api.resolve(SYSTEM, token())))).toEqual({ sequence: 0, changeDate: undefined, owner: SYSTEM_OWNER });
  });

  it("tells the story: instance default de restricted to en, de; org A overrides the default and resets it", async () => {
    const set = ok(await api.set({ defaultLanguage: { key: "de" }, restrictedLanguages: { languages: langs("en", "de") } }, inst(), token()));
    expect(details(set)).toEqual({ sequence: 1, changeDate: expect.any(String), owner: instanceOwner(server.instanceId) });

    const I = instanceOwner(server.instanceId);
    expect(await resolve(inst())).toEqual({
      defaultLanguage: { value: "de" },
      restrictedLanguages: { value: langs("en", "de") },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    const inheritedFromInstance = {
      defaultLanguage: { value: "de", owner: I },
      restrictedLanguages: { value: langs("en", "de"), owner: I },
      supportedLanguages: SUPPORTED_RESOLVED,
    };
    expect(await resolve(org(orgA))).toEqual(inheritedFromInstance);
    expect(await resolve(org(orgB))).toEqual(inheritedFromInstance);
    expect(await resolve(SYSTEM)).toEqual({ defaultLanguage: { value: "en" }, restrictedLanguages: { value: [] }, supportedLanguages: SUPPORTED_RESOLVED });

    const overridden = ok(await api.set({ defaultLanguage: { key: "en" } }, org(orgA), token()));
    expect(details(overridden)).toEqual({ sequence: 1, changeDate: expect.any(String), owner: orgOwner(orgA) });
    expect(await resolve(org(orgA))).toEqual({
      defaultLanguage: { value: "en" },
      restrictedLanguages: { value: langs("en", "de"), owner: I },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(await resolve(org(orgB))).toEqual(inheritedFromInstance);
    expect(await resolve(inst())).toMatchObject({ defaultLanguage: { value: "de" } });
    const afterOverride = ok(await api.resolve(org(orgA), token()));
    expect(details(afterOverride)).toEqual({ sequence: 1, changeDate: details(overridden).changeDate, owner: orgOwner(orgA) });

    const reset = ok(await api.set({ defaultLanguage: { key: "" } }, org(orgA), token()));
    expect(details(reset)).toEqual({ sequence: 2, changeDate: expect.any(String), owner: orgOwner(orgA) });
    expect(await resolve(org(orgA))).toEqual(inheritedFromInstance);
    expect(details(ok(await api.resolve(org(orgA), token())))).toEqual({ sequence: 2, changeDate: details(reset).changeDate, owner: orgOwner(orgA) });
  });

  it("falls back to the child's first restricted language when a parent restricts after the child chose, owned by the restricting context", async () => {
    const I = instanceOwner(server.instanceId);
    ok(await api.set({ defaultLanguage: { key: "en" } }, org(orgA), token()));
    ok(await api.set({ defaultLanguage: { key: "de" }, restrictedLanguages: { languages: langs("de") } }, inst(), token()));
    expect(await resolve(org(orgA))).toEqual({
      defaultLanguage: { value: "de", owner: I },
      restrictedLanguages: { value: langs("de"), owner: I },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    // A's own value is still stored: Details count its one change.
    expect(details(ok(await api.resolve(org(orgA), token())))).toMatchObject({ sequence: 1, owner: orgOwner(orgA) });

    // The system restricts to fr, it: allowed although it breaks nothing of its own; the instance sets both itself.
    ok(await api.set({ restrictedLanguages: { languages: langs("fr", "it") }, defaultLanguage: { key: "it" } }, SYSTEM, token()));
    expect(await resolve(inst())).toEqual({
      defaultLanguage: { value: "de" },
      restrictedLanguages: { value: langs("de") },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(await resolve(SYSTEM)).toEqual({
      defaultLanguage: { value: "it" },
      restrictedLanguages: { value: langs("fr", "it") },
      supportedLanguages: SUPPORTED_RESOLVED,
    });

    // Dropping only the instance's restriction would leave its own "de" outside the system's: refused.
    const refused = failed(await api.set({ restrictedLanguages: { languages: [] } }, inst(), token()), Code.FailedPrecondition);
    expect(refused).toContain('"de"');
    expect(refused).toContain("fr, it");
    ok(await api.set(RESET_ALL, inst(), token()));
    const fromSystem = {
      defaultLanguage: { value: "it", owner: SYSTEM_OWNER },
      restrictedLanguages: { value: langs("fr", "it"), owner: SYSTEM_OWNER },
      supportedLanguages: SUPPORTED_RESOLVED,
    };
    expect(await resolve(inst())).toEqual(fromSystem);
    expect(await resolve(org(orgB))).toEqual(fromSystem);
    // A's own "en" is outside the system's restriction: A speaks the first allowed one, owned by the system.
    expect(await resolve(org(orgA))).toEqual({ ...fromSystem, defaultLanguage: { value: "fr", owner: SYSTEM_OWNER } });

    // The child's own value speaks again once the parent allows it.
    ok(await api.set({ restrictedLanguages: { languages: [] } }, SYSTEM, token()));
    expect(await resolve(org(orgA))).toEqual({
      defaultLanguage: { value: "en" },
      restrictedLanguages: { value: [], owner: SYSTEM_OWNER },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(await resolve(org(orgB))).toEqual({
      defaultLanguage: { value: "it", owner: SYSTEM_OWNER },
      restrictedLanguages: { value: [], owner: SYSTEM_OWNER },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
  });

  it("falls back in the restricting context itself when its inherited default leaves the restriction (owner absent there)", async () => {
    const I = instanceOwner(server.instanceId);
    ok(await api.set({ defaultLanguage: { key: "de" } }, SYSTEM, token()));
    // The instance restricts without a default of its own: the system's "de" is allowed.
    ok(await api.set({ restrictedLanguages: { languages: langs("nl", "de") } }, inst(), token()));
    expect(await resolve(inst())).toEqual({
      defaultLanguage: { value: "de", owner: SYSTEM_OWNER },
      restrictedLanguages: { value: langs("nl", "de") },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    // The system changes its default: the instance's combination breaks; it speaks its own first language.
    ok(await api.set({ defaultLanguage: { key: "pl" } }, SYSTEM, token()));
    expect(await resolve(inst())).toEqual({
      defaultLanguage: { value: "nl" },
      restrictedLanguages: { value: langs("nl", "de") },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(await resolve(org(orgA))).toEqual({
      defaultLanguage: { value: "nl", owner: I },
      restrictedLanguages: { value: langs("nl", "de"), owner: I },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(await resolve(SYSTEM)).toEqual({ defaultLanguage: { value: "pl" }, restrictedLanguages: { value: [] }, supportedLanguages: SUPPORTED_RESOLVED });
  });

  it("story part two: org A sets en, the instance then restricts to de only; A resolves de owned by the instance", async () => {
    const I = instanceOwner(server.instanceId);
    ok(await api.set({ defaultLanguage: { key: "de" }, restrictedLanguages: { languages: langs("en", "de") } }, inst(), token()));
    ok(await api.set({ defaultLanguage: { key: "en" } }, org(orgA), token()));
    ok(await api.set({ restrictedLanguages: { languages: langs("de") } }, inst(), token()));
    expect(await resolve(org(orgA))).toEqual({
      defaultLanguage: { value: "de", owner: I },
      restrictedLanguages: { value: langs("de"), owner: I },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(await resolve(org(orgB))).toEqual({
      defaultLanguage: { value: "de", owner: I },
      restrictedLanguages: { value: langs("de"), owner: I },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    // A may not write anything that keeps its own "en" outside: its next default change must fit.
    const msg = failed(await api.set({ defaultLanguage: { key: "fr" } }, org(orgA), token()), Code.FailedPrecondition);
    expect(msg).toContain('"fr"');
    expect(msg).toContain("de");
    ok(await api.set({ defaultLanguage: { key: "de" } }, org(orgA), token()));
    expect(await resolve(org(orgA))).toEqual({
      defaultLanguage: { value: "de" },
      restrictedLanguages: { value: langs("de"), owner: I },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
  });

  it("touches only the fields present, resets with an empty key or list, and keeps the sequence on writes that change nothing", async () => {
    const first = details(ok(await api.set({ restrictedLanguages: { languages: langs("fr", "de", "en") } }, org(orgB), token())));
    expect(first).toEqual({ sequence: 1, changeDate: expect.any(String), owner: orgOwner(orgB) });
    const second = details(ok(await api.set({ defaultLanguage: { key: "fr" } }, org(orgB), token())));
    expect(second).toEqual({ sequence: 2, changeDate: expect.any(String), owner: orgOwner(orgB) });
    expect(await resolve(org(orgB))).toEqual({
      defaultLanguage: { value: "fr" },
      restrictedLanguages: { value: langs("fr", "de", "en") },
      supportedLanguages: SUPPORTED_RESOLVED,
    });

    // The same values again, an empty settings message, a reset of nothing: no change, same details.
    for (const same of <JsonObject[]>[{ defaultLanguage: { key: "fr" } }, { restrictedLanguages: { languages: langs("fr", "de", "en") } }, {}]) {
      expect(details(ok(await api.set(same, org(orgB), token()))), JSON.stringify(same)).toEqual(second);
    }
    expect(details(ok(await api.resolve(org(orgB), token())))).toEqual(second);
    // Order of a restriction matters: a new order is a change.
    expect(details(ok(await api.set({ restrictedLanguages: { languages: langs("de", "fr", "en") } }, org(orgB), token())))).toMatchObject({ sequence: 3 });
    expect(await resolve(org(orgB))).toMatchObject({ restrictedLanguages: { value: langs("de", "fr", "en") } });

    // Resetting the restriction keeps the default.
    expect(details(ok(await api.set({ restrictedLanguages: { languages: [] } }, org(orgB), token())))).toMatchObject({ sequence: 4 });
    expect(await resolve(org(orgB))).toEqual({
      defaultLanguage: { value: "fr" },
      restrictedLanguages: { value: [], owner: SYSTEM_OWNER },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(details(ok(await api.set({ restrictedLanguages: { languages: [] } }, org(orgB), token())))).toMatchObject({ sequence: 4 });
    expect(details(ok(await api.set({ defaultLanguage: { key: "" } }, org(orgB), token())))).toMatchObject({ sequence: 5 });
    expect(await resolve(org(orgB))).toEqual({
      defaultLanguage: { value: "en", owner: SYSTEM_OWNER },
      restrictedLanguages: { value: [], owner: SYSTEM_OWNER },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    // Nothing set any more, but the context's events still count.
    expect(details(ok(await api.resolve(org(orgB), token())))).toMatchObject({ sequence: 5, owner: orgOwner(orgB) });

    // A reset in a context that never set anything changes nothing and stores nothing.
    const orgC = await createOrg(server, `Lang C ${++counter}`);
    expect(details(ok(await api.set(RESET_ALL, org(orgC), token())))).toEqual({ sequence: 0, changeDate: undefined, owner: orgOwner(orgC) });
    expect(await server.service.store.db.selectFrom("settings").selectAll().where("org_id", "=", orgC).execute()).toEqual([]);
  });

  it("refuses a default outside the effective restriction with FailedPrecondition naming both, and stores nothing", async () => {
    ok(await api.set({ defaultLanguage: { key: "de" }, restrictedLanguages: { languages: langs("en", "de") } }, inst(), token()));
    const before = await server.service.store.db.selectFrom("settings").selectAll().orderBy("instance_id").orderBy("org_id").execute();
    const events = async () =>
      Number(
        (
          await server.service.store.db
            .selectFrom("events")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const eventsBefore = await events();

    const cases: [object, object, string, string][] = [
      // The org's default against the inherited restriction.
      [{ defaultLanguage: { key: "fr" } }, org(orgA), '"fr"', "en, de"],
      // The org's restriction against the inherited default "de".
      [{ restrictedLanguages: { languages: langs("en", "it") } }, org(orgA), '"de"', "en, it"],
      // Both in one request that do not fit.
      [{ defaultLanguage: { key: "es" }, restrictedLanguages: { languages: langs("pt", "nl") } }, org(orgB), '"es"', "pt, nl"],
      // The instance's own restriction against its own default.
      [{ restrictedLanguages: { languages: langs("en") } }, inst(), '"de"', "en"],
      [{ defaultLanguage: { key: "ja" } }, inst(), '"ja"', "en, de"],
      // The system may not break its own combination either.
      [{ restrictedLanguages: { languages: langs("zh") } }, SYSTEM, '"en"', "zh"],
    ];
    for (const [settings, ctx, dflt, restricted] of cases) {
      const message = failed(await api.set(settings as never, ctx as never, token()), Code.FailedPrecondition, JSON.stringify([settings, ctx]));
      expect(message, JSON.stringify(settings)).toContain(dflt);
      expect(message, JSON.stringify(settings)).toContain(`(${restricted})`);
    }
    expect(await server.service.store.db.selectFrom("settings").selectAll().orderBy("instance_id").orderBy("org_id").execute()).toEqual(before);
    expect(await events()).toBe(eventsBefore);
    expect(details(ok(await api.resolve(org(orgA), token())))).toEqual({ sequence: 0, changeDate: undefined, owner: orgOwner(orgA) });
  });

  it("refuses malformed, unsupported and duplicate languages and too long lists with InvalidArgument naming the field", async () => {
    const rowsBefore = await server.service.store.db.selectFrom("settings").selectAll().orderBy("instance_id").orderBy("org_id").execute();
    const cases: [object, string][] = [
      [{ defaultLanguage: { key: "DE" } }, "default_language"],
      [{ defaultLanguage: { key: "deu" } }, "default_language"],
      [{ defaultLanguage: { key: "de-CH" } }, "default_language"],
      [{ defaultLanguage: { key: "d" } }, "default_language"],
      [{ restrictedLanguages: { languages: langs("en", "DE") } }, "restricted_languages"],
      [{ restrictedLanguages: { languages: langs("en", "") } }, "restricted_languages"],
      [{ restrictedLanguages: { languages: langs(...Array.from({ length: 101 }, () => "en")) } }, "restricted_languages"],
    ];
    for (const [settings, field] of cases) {
      for (const ctx of [org(orgA), inst(), SYSTEM]) {
        const message = failed(await api.set(settings as never, ctx, token()), Code.InvalidArgument, JSON.stringify([settings, ctx]));
        expect(message, JSON.stringify(settings)).toContain(field);
      }
    }
    // Well-formed but not supported, or named twice: the language is named.
    const unsupported = failed(await api.set({ defaultLanguage: { key: "xx" } }, org(orgA), token()), Code.InvalidArgument);
    expect(unsupported).toContain('"xx"');
    const unsupportedInList = failed(await api.set({ restrictedLanguages: { languages: langs("en", "xx") } }, inst(), token()), Code.InvalidArgument);
    expect(unsupportedInList).toContain('"xx"');
    const twice = failed(await api.set({ restrictedLanguages: { languages: langs("en", "de", "en") } }, org(orgA), token()), Code.InvalidArgument);
    expect(twice).toContain('"en"');
    // A settings message is required.
    failed(await protocolCall("SetLanguages", { ctx: org(orgA) }), Code.InvalidArgument);
    expect(await server.service.store.db.selectFrom("settings").selectAll().orderBy("instance_id").orderBy("org_id").execute()).toEqual(rowsBefore);
  });

  it("keeps the instance's defaultLanguage (PlatformInstances) and its language settings one value", async () => {
    const instances = protocolClient(PlatformInstances, "grpc", server.baseUrl);
    const getLanguage = async () => ok(await instances.call("GetInstance", { id: server.instanceId }, token())).instance.defaultLanguage as string;
    expect(await getLanguage()).toBe("en");
    // The system's default shows in the instance's while it sets none.
    ok(await api.set({ defaultLanguage: { key: "pl" } }, SYSTEM, token()));
    expect(await getLanguage()).toBe("pl");

    ok(await instances.call("PatchInstance", { id: server.instanceId, instance: { defaultLanguage: "fr" } }, token()));
    expect(await resolve(inst())).toEqual({
      defaultLanguage: { value: "fr" },
      restrictedLanguages: { value: [], owner: SYSTEM_OWNER },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(await resolve(org(orgA))).toMatchObject({ defaultLanguage: { value: "fr", owner: instanceOwner(server.instanceId) } });
    const afterPatch = details(ok(await api.resolve(inst(), token())));
    expect(afterPatch).toMatchObject({ sequence: expect.any(Number), owner: instanceOwner(server.instanceId) });
    expect(afterPatch.sequence).toBeGreaterThan(0);

    const set = details(ok(await api.set({ defaultLanguage: { key: "it" }, restrictedLanguages: { languages: langs("it", "fr") } }, inst(), token())));
    expect(set.sequence).toBe(afterPatch.sequence + 1);
    expect(await getLanguage()).toBe("it");
    // The same language again through the instance API changes no settings.
    ok(await instances.call("PatchInstance", { id: server.instanceId, instance: { defaultLanguage: "it" } }, token()));
    expect(details(ok(await api.resolve(inst(), token())))).toEqual(set);
    // The rules hold for the instance API too; nothing changes.
    expect(
      failed(await instances.call("PatchInstance", { id: server.instanceId, instance: { defaultLanguage: "de" } }, token()), Code.FailedPrecondition),
    ).toContain('"de"');
    failed(await instances.call("PatchInstance", { id: server.instanceId, instance: { defaultLanguage: "xx" } }, token()), Code.InvalidArgument);
    failed(await instances.call("PatchInstance", { id: server.instanceId, instance: { defaultLanguage: "DE" } }, token()), Code.InvalidArgument);
    expect(await getLanguage()).toBe("it");
    expect(details(ok(await api.resolve(inst(), token())))).toEqual(set);

    // A reset in the settings shows the system's again.
    ok(await api.set(RESET_ALL, inst(), token()));
    expect(await getLanguage()).toBe("pl");
    // The instance's default in effect follows the fallback when the system's restriction breaks it.
    ok(await instances.call("PatchInstance", { id: server.instanceId, instance: { defaultLanguage: "ja" } }, token()));
    ok(await api.set({ defaultLanguage: { key: "zh" }, restrictedLanguages: { languages: langs("zh", "nl") } }, SYSTEM, token()));
    expect(await getLanguage()).toBe("zh");
    expect(await resolve(inst())).toMatchObject({ defaultLanguage: { value: "zh", owner: SYSTEM_OWNER } });
  });

  it("sets the new instance's language settings from CreateInstance's defaultLanguage", async () => {
    const instances = protocolClient(PlatformInstances, "grpc", server.baseUrl);
    const created = ok(
      await instances.call(
        "CreateInstance",
        {
          instance: {
            name: "Lang New",
            domains: [`lang-new-${++counter}.example`],
            firstOrgName: "First",
            defaultLanguage: "de",
            admin: { user: { username: "admin", machine: { name: "Admin" } } },
          },
        },
        token(),
      ),
    );
    const id = String(created.details.id);
    const m = ok(await api.resolve({ instanceId: id }, token()));
    expect(resolvedLanguages(m)).toEqual({
      defaultLanguage: { value: "de" },
      restrictedLanguages: { value: [], owner: SYSTEM_OWNER },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(details(m)).toEqual({ sequence: 1, changeDate: expect.any(String), owner: instanceOwner(id) });
    expect(ok(await instances.call("GetInstance", { id }, token())).instance.defaultLanguage).toBe("de");
    // Without one, the instance sets nothing.
    const plain = ok(
      await instances.call(
        "CreateInstance",
        {
          instance: {
            name: "Lang Plain",
            domains: [`lang-plain-${counter}.example`],
            firstOrgName: "First",
            admin: { user: { username: "admin", machine: { name: "Admin" } } },
          },
        },
        token(),
      ),
    );
    const plainId = String(plain.details.id);
    expect(details(ok(await api.resolve({ instanceId: plainId }, token())))).toEqual({ sequence: 0, changeDate: undefined, owner: instanceOwner(plainId) });
    expect(await server.service.store.db.selectFrom("settings").selectAll().where("instance_id", "=", plainId).execute()).toEqual([]);
    // An unsupported language creates no instance.
    failed(
      await instances.call(
        "CreateInstance",
        {
          instance: {
            name: "Lang Bad",
            domains: [`lang-bad-${counter}.example`],
            firstOrgName: "First",
            defaultLanguage: "xx",
            admin: { user: { username: "admin", machine: { name: "Admin" } } },
          },
        },
        token(),
      ),
      Code.InvalidArgument,
    );
    expect(await server.service.store.db.selectFrom("instances").select("id").where("name", "=", "Lang Bad").execute()).toEqual([]);
  });

  it("removes an organization's settings with it and leaves the others' resolution alone", async () => {
    ok(await api.set({ defaultLanguage: { key: "de" }, restrictedLanguages: { languages: langs("en", "de") } }, inst(), token()));
    ok(await api.set({ defaultLanguage: { key: "en" } }, org(orgA), token()));
    ok(await api.set({ restrictedLanguages: { languages: langs("de") } }, org(orgB), token()));
    const featureRow = ok(
      await protocolClient(PlatformFeatureSettings, "grpc", server.baseUrl).call(
        "SetFeatures",
        { ctx: org(orgA), settings: { tokenExchange: { set: true } } },
        token(),
      ),
    );
    expect(featureRow.details).toMatchObject({ sequence: "1" });
    const bBefore = await resolve(org(orgB));
    const rows = async (orgId: string) =>
      (await server.service.store.db.selectFrom("settings").select(["kind", "org_id"]).where("org_id", "=", orgId).orderBy("kind").execute()).map(
        (r) => r.kind,
      );
    expect(await rows(orgA)).toEqual(["feature", "language"]);

    ok(await protocolClient(PlatformOrganizations, "grpc", server.baseUrl).call("DeleteOrganization", { id: orgA }, token()));
    expect(await rows(orgA)).toEqual([]);
    expect(await rows(orgB)).toEqual(["language"]);
    expect(await resolve(org(orgB))).toEqual(bBefore);
    expect(bBefore).toEqual({
      defaultLanguage: { value: "de", owner: instanceOwner(server.instanceId) },
      restrictedLanguages: { value: langs("de") },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    expect(await resolve(inst())).toEqual({
      defaultLanguage: { value: "de" },
      restrictedLanguages: { value: langs("en", "de") },
      supportedLanguages: SUPPORTED_RESOLVED,
    });
    // The deleted organization is no context any more.
    failed(await api.resolve(org(orgA), token()), Code.NotFound);
    failed(await api.set({ defaultLanguage: { key: "de" } }, org(orgA), token()), Code.NotFound);
  });

  it("serializes concurrent writes to one context: every change is one event and the sequence counts them", async () => {
    const keys = ["en", "de", "fr", "it", "es", "pt", "nl", "pl"];
    const results = await Promise.all(keys.map((key) => languageClient(server).set({ defaultLanguage: { key } }, org(orgA), token())));
    const sequences = results.map((r) => details(ok(r)).sequence).sort((x, y) => x - y);
    expect(sequences).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const last = keys[results.findIndex((r) => details(ok(r)).sequence === 8)]!;
    expect(await resolve(org(orgA))).toMatchObject({ defaultLanguage: { value: last } });
    const events = await server.service.store.db
      .selectFrom("events")
      .select(["event_type as type", "sequence", "payload"])
      .where("aggregate_type", "=", "settings.language")
      .where("aggregate_id", "=", orgA)
      .orderBy("sequence")
      .execute();
    expect(events.map(({ type, sequence }) => ({ type, sequence }))).toEqual(keys.map((_, i) => ({ type: "settings.language.set", sequence: i + 1 })));
    expect(events.map((e) => (e.payload as { set: { default_language: string } }).set.default_language).sort()).toEqual([...keys].sort());
    expect(await server.service.store.db.selectFrom("settings").select(["sequence", "properties"]).where("org_id", "=", orgA).execute()).toEqual([
      { sequence: 8, properties: { default_language: last } },
    ]);
  });

  it("removes an instance's settings (its own and its organizations') with the instance", async () => {
    const gone = await server.createInstance(`lang-gone-${++counter}.example`);
    ok(await api.set({ defaultLanguage: { key: "fr" } }, { instanceId: gone.instanceId }, token()));
    ok(
      await protocolClient(PlatformFeatureSettings, "grpc", server.baseUrl).call(
        "SetFeatures",
        { ctx: { instanceId: gone.instanceId }, settings: { actions: { set: false } } },
        token(),
      ),
    );
    expect(await server.service.store.db.selectFrom("settings").select("kind").where("instance_id", "=", gone.instanceId).orderBy("kind").execute()).toEqual([
      { kind: "feature" },
      { kind: "language" },
    ]);
    ok(await protocolClient(PlatformInstances, "grpc", server.baseUrl).call("DeleteInstance", { id: gone.instanceId }, token()));
    expect(await server.service.store.db.selectFrom("settings").selectAll().where("instance_id", "=", gone.instanceId).execute()).toEqual([]);
    failed(await api.resolve({ instanceId: gone.instanceId }, token()), Code.NotFound);
  });

  const protocolCall = (method: string, req: object) => languageRaw(server).call(method, req as never, token());
});
