import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { comparable } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { FEATURES, LANGUAGES, SUPPORTED, SYSTEM_OWNER, createOrg, instanceOwner, langs, ok, orgOwner, type Msg } from "./helpers.js";

/**
 * The same short settings scenario over gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and
 * REST: identical results once ids and dates are named, and the REST status of each step.
 */

type Step = { result: CallResult; status: number };
const RESET_ALL = { defaultLanguage: { key: "" }, restrictedLanguages: { languages: [] } };

/** The shared instance's sequences move with every protocol's scenario. */
const comparableStep = (step: string, result: CallResult, ids: Record<string, string>) =>
  comparable(result, ids, { alsoVolatile: step.startsWith("instance") ? ["sequence"] : [] });

describe.each(DATABASE_KINDS)("PlatformLanguageSettings and PlatformFeatureSettings over every protocol (%s)", (kind) => {
  let server: TestServer;
  let plainUser: string;
  beforeAll(async () => {
    server = await startTestServer(kind);
    plainUser = (await server.createUser({})).token;
  });
  afterAll(() => server?.close());

  /** Runs the scenario on one protocol, on its own two organizations; the instance ends as it began. */
  async function scenario(protocol: Protocol) {
    const a = await createOrg(server, `mx ${protocol} A`);
    const b = await createOrg(server, `mx ${protocol} B`);
    const languages = protocolClient(LANGUAGES, protocol, server.baseUrl);
    const features = protocolClient(FEATURES, protocol, server.baseUrl);
    const steps: Record<string, Step> = {};
    const run = async (
      step: string,
      status: number,
      client: typeof languages,
      method: string,
      req: JsonObject,
      token: string | undefined = server.adminToken,
    ) => {
      steps[step] = { result: await client.call(method, req, token), status };
    };
    const l = (step: string, status: number, method: string, req: JsonObject, token?: string) =>
      run(step, status, languages, method, req, token ?? server.adminToken);
    const f = (step: string, status: number, method: string, req: JsonObject, token?: string) =>
      run(step, status, features, method, req, token ?? server.adminToken);
    const A = { orgId: a };
    const B = { orgId: b };

    await l("resolveAInitially", 200, "ResolveLanguages", { ctx: A });
    await l("instanceSet", 200, "SetLanguages", { settings: { defaultLanguage: { key: "de" }, restrictedLanguages: { languages: langs("en", "de") } } });
    await l("instanceResolve", 200, "ResolveLanguages", {});
    await l("resolveA", 200, "ResolveLanguages", { ctx: A });
    await l("setA", 200, "SetLanguages", { ctx: A, settings: { defaultLanguage: { key: "en" } } });
    await l("setASame", 200, "SetLanguages", { ctx: A, settings: { defaultLanguage: { key: "en" } } });
    await l("resolveAOverridden", 200, "ResolveLanguages", { ctx: A });
    await l("resolveB", 200, "ResolveLanguages", { ctx: B });
    await l("setAOutside", 400, "SetLanguages", { ctx: A, settings: { defaultLanguage: { key: "fr" } } });
    await l("setAUpper", 400, "SetLanguages", { ctx: A, settings: { defaultLanguage: { key: "DE" } } });
    await l("setAUnsupported", 400, "SetLanguages", { ctx: A, settings: { restrictedLanguages: { languages: langs("en", "xx") } } });
    await l("setADuplicate", 400, "SetLanguages", { ctx: A, settings: { restrictedLanguages: { languages: langs("en", "en") } } });
    await l("resetA", 200, "SetLanguages", { ctx: A, settings: { defaultLanguage: { key: "" } } });
    await l("resolveAReset", 200, "ResolveLanguages", { ctx: A });
    await l("setBRestricted", 200, "SetLanguages", { ctx: B, settings: { restrictedLanguages: { languages: langs("de") } } });
    await l("instanceRestrictsToEn", 200, "SetLanguages", { settings: { defaultLanguage: { key: "en" }, restrictedLanguages: { languages: langs("en") } } });
    await l("resolveBBroken", 200, "ResolveLanguages", { ctx: B });
    await l("plainUserSet", 403, "SetLanguages", { ctx: A, settings: { defaultLanguage: { key: "en" } } }, plainUser);
    await l("plainUserResolveA", 403, "ResolveLanguages", { ctx: A }, plainUser);
    await l("instancePlainUserResolve", 200, "ResolveLanguages", {}, plainUser);
    await l("unauthenticated", 401, "ResolveLanguages", {}, "");
    await l("unknownOrg", 404, "ResolveLanguages", { ctx: { orgId: "no-such-org" } });

    await f("featuresA", 200, "ResolveFeatures", { ctx: A });
    await f("featuresSetA", 200, "SetFeatures", { ctx: A, settings: { tokenExchange: { set: true } } });
    await f("featuresSetANotAllowed", 400, "SetFeatures", { ctx: A, settings: { actions: { set: false } } });
    await f("featuresAAfter", 200, "ResolveFeatures", { ctx: A });
    await f("featuresResetA", 200, "SetFeatures", { ctx: A, settings: { tokenExchange: { reset: true } } });
    await f("featuresPlainUser", 403, "ResolveFeatures", {}, plainUser);
    await f("instanceSettingsOff", 200, "SetFeatures", { settings: { multitenancySettings: { set: false } } });
    await l("gated", 400, "ResolveLanguages", { ctx: A });
    await f("instanceSettingsOn", 200, "SetFeatures", { settings: { multitenancySettings: { reset: true } } });
    await l("instanceReset", 200, "SetLanguages", { settings: RESET_ALL });
    await l("resolveAFinally", 200, "ResolveLanguages", { ctx: A });
    return { steps, ids: { orgA: a, orgB: b, instance: server.instanceId } };
  }

  it("gives the same results and codes on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));

    const { steps: g, ids } = byProtocol.get("grpc")!;
    const r = (step: string) => g[step]!.result;
    const m = (step: string): Msg => ok(r(step), step);
    const I = instanceOwner(server.instanceId);
    const supported = { value: langs(...SUPPORTED), owner: SYSTEM_OWNER };

    expect(m("resolveAInitially")).toEqual({
      details: { owner: orgOwner(ids.orgA) },
      settings: { defaultLanguage: { value: "en", owner: SYSTEM_OWNER }, restrictedLanguages: { owner: SYSTEM_OWNER }, supportedLanguages: supported },
    });
    expect(m("instanceSet")).toEqual({ details: { sequence: expect.any(String), changeDate: expect.any(String), owner: I } });
    expect(m("instanceResolve")).toEqual({
      details: m("instanceSet").details,
      settings: { defaultLanguage: { value: "de" }, restrictedLanguages: { value: langs("en", "de") }, supportedLanguages: supported },
    });
    expect(m("resolveA")).toEqual({
      details: { owner: orgOwner(ids.orgA) },
      settings: { defaultLanguage: { value: "de", owner: I }, restrictedLanguages: { value: langs("en", "de"), owner: I }, supportedLanguages: supported },
    });
    expect(m("setA")).toEqual({ details: { sequence: "1", changeDate: expect.any(String), owner: orgOwner(ids.orgA) } });
    expect(m("setASame")).toEqual(m("setA"));
    expect(m("resolveAOverridden")).toEqual({
      details: m("setA").details,
      settings: { defaultLanguage: { value: "en" }, restrictedLanguages: { value: langs("en", "de"), owner: I }, supportedLanguages: supported },
    });
    expect(m("resolveB")).toEqual({ ...m("resolveA"), details: { owner: orgOwner(ids.orgB) } });
    expect(r("setAOutside")).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect((r("setAOutside") as { message: string }).message).toBe('the default language "fr" must be one of the restricted languages (en, de)');
    for (const step of ["setAUpper", "setAUnsupported", "setADuplicate"]) expect(r(step), step).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(m("resetA")).toEqual({ details: { sequence: "2", changeDate: expect.any(String), owner: orgOwner(ids.orgA) } });
    expect(m("resolveAReset")).toEqual({ ...m("resolveA"), details: m("resetA").details });
    expect(m("setBRestricted").details).toMatchObject({ sequence: "1", owner: orgOwner(ids.orgB) });
    // B's own restriction [de] and the instance's new default "en": B falls back to "de", its own.
    expect(m("resolveBBroken").settings).toEqual({
      defaultLanguage: { value: "de" },
      restrictedLanguages: { value: langs("de") },
      supportedLanguages: supported,
    });
    expect(r("plainUserSet")).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(r("plainUserResolveA")).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(m("instancePlainUserResolve").settings.defaultLanguage).toEqual({ value: "en" });
    expect(r("unauthenticated")).toMatchObject({ ok: false, code: Code.Unauthenticated });
    expect(r("unknownOrg")).toMatchObject({ ok: false, code: Code.NotFound });

    const sys = { owner: SYSTEM_OWNER };
    expect(m("featuresA")).toEqual({
      details: { owner: orgOwner(ids.orgA) },
      settings: {
        multitenancyResourcesApi: { value: true, ...sys },
        multitenancySettings: { value: true, ...sys },
        actions: { value: true, ...sys },
        tokenExchange: sys,
      },
    });
    expect(m("featuresSetA")).toEqual({ details: { sequence: "1", changeDate: expect.any(String), owner: orgOwner(ids.orgA) } });
    expect(r("featuresSetANotAllowed")).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(m("featuresAAfter")).toEqual({ details: m("featuresSetA").details, settings: { ...m("featuresA").settings, tokenExchange: { value: true } } });
    expect(m("featuresResetA").details).toMatchObject({ sequence: "2" });
    expect(r("featuresPlainUser")).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(m("instanceSettingsOff").details).toMatchObject({ owner: I });
    expect(r("gated")).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect((r("gated") as { message: string }).message).toContain("multitenancy_settings");
    expect(m("resolveAFinally").settings).toEqual(m("resolveAInitially").settings);

    const reference = Object.fromEntries(Object.entries(g).map(([k, v]) => [k, comparableStep(k, v.result, ids)]));
    for (const [protocol, { steps, ids: theirs }] of byProtocol) {
      expect(Object.keys(steps), protocol).toEqual(Object.keys(g));
      for (const [step, { result, status }] of Object.entries(steps)) {
        expect(comparableStep(step, result, theirs), `${protocol} ${step}`).toEqual(reference[step]);
        if (!result.ok && step !== "unauthenticated")
          expect(result.message, `${protocol} ${step}`).toBe((g[step]!.result as { message: string }).message.replaceAll(ids.orgA, theirs.orgA!));
        if (protocol === "rest") expect(result.httpStatus, `rest ${step}: ${JSON.stringify(result)}`).toBe(status);
      }
    }
  });

  it("answers REST errors as rpcStatus bodies and takes ctx from the query", async () => {
    const org = await createOrg(server, "mx raw");
    const rest = (query: string, init: RequestInit = {}) =>
      fetch(`${server.baseUrl}/settings/v3alpha/languages${query}`, {
        ...init,
        headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json", ...init.headers },
      });
    const patched = await rest(`?ctx.orgId=${org}`, { method: "PATCH", body: JSON.stringify({ defaultLanguage: { key: "fr" } }) });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as Msg).details).toMatchObject({ sequence: "1", owner: orgOwner(org) });
    const got = await rest(`?ctx.orgId=${org}`);
    expect(got.status).toBe(200);
    expect(((await got.json()) as Msg).settings.defaultLanguage).toEqual({ value: "fr" });
    for (const [init, status, code] of [
      [{ method: "PATCH", body: JSON.stringify({ defaultLanguage: { key: "xx" } }) }, 400, Code.InvalidArgument],
      [{ method: "PATCH", body: JSON.stringify({ restrictedLanguages: { languages: [{ key: "de" }] } }) }, 400, Code.FailedPrecondition],
      [{ method: "PATCH", body: "{not json" }, 400, Code.InvalidArgument],
    ] as const) {
      const res = await rest(`?ctx.orgId=${org}`, init);
      expect(res.status, JSON.stringify(init)).toBe(status);
      const body = (await res.json()) as JsonObject;
      expect(Object.keys(body).sort()).toEqual(["code", "details", "message"]);
      expect(body.code).toBe(code);
    }
    const features = await fetch(`${server.baseUrl}/settings/v3alpha/features?ctx.system=true`, { headers: { authorization: `Bearer ${server.adminToken}` } });
    expect(features.status).toBe(200);
    expect(((await features.json()) as Msg).details).toEqual({ owner: SYSTEM_OWNER });
  });
});
