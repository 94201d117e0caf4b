import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformMessageTextSettings } from "../../gen/platform/settings/message_text/v3alpha/message_text_service_pb.js";
import { EVENT_TYPES } from "../../src/domain/action/execution/events.js";
import { DEFAULT_TEXTS } from "../../src/domain/settings/message-texts/defaults.js";
import { messageFor, messageLanguage, type RenderedEmail } from "../../src/engines/notifications/texts/index.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { comparable } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { SYSTEM_OWNER, createOrg, failed, instanceOwner, langs, languageClient, ok, orgOwner, type Msg } from "./helpers.js";

/**
 * PlatformMessageTextSettings: the default texts per kind and language, overrides inherited
 * system → instance → organization with their owners, resets, validation, permissions and
 * the flag, over every protocol; and what the outbox reads (messageFor, messageLanguage).
 */

const TEXTS = PlatformMessageTextSettings;
const PLACEHOLDERS = ["{{.DisplayName}}", "{{.OrgName}}", "{{.ExpiresIn}}", "{{.Code}}", "{{.URL}}"];
const DATA = { DisplayName: "Ada", OrgName: "Acme", ExpiresIn: "1 hour", Code: "K7PX4Q", URL: "https://login.example.com/r" };
const SYSTEM = { system: true };

describe.each(DATABASE_KINDS)("PlatformMessageTextSettings (%s)", (kind) => {
  let server: TestServer;
  let plainUser: string;
  const client = (protocol: Protocol = "grpc") => protocolClient(TEXTS, protocol, server.baseUrl);
  const set = (kindName: string, language: string, settings: JsonObject, ctx?: JsonObject, protocol: Protocol = "grpc") =>
    client(protocol).call("SetMessageText", { kind: kindName, language, settings, ...(ctx && { ctx }) }, server.adminToken);
  beforeAll(async () => {
    server = await startTestServer(kind);
    plainUser = (await server.createUser({})).token;
  });
  afterAll(() => server?.close());

  /** One protocol's run on its own organizations; the instance ends as it began. */
  async function scenario(protocol: Protocol) {
    const a = await createOrg(server, `mt ${protocol} A`);
    const b = await createOrg(server, `mt ${protocol} B`);
    const steps: Record<string, { result: CallResult; status: number }> = {};
    const call = async (step: string, status: number, method: string, req: JsonObject, token: string | undefined = server.adminToken) => {
      steps[step] = { result: await client(protocol).call(method, req, token), status };
    };
    const pr = { kind: "password_reset", language: "de" };
    const A = { orgId: a };
    await call("resolveDefault", 200, "ResolveMessageText", { ...pr, ctx: A });
    await call("instanceSet", 200, "SetMessageText", { ...pr, settings: { subject: { set: "Neues Passwort für {{ .OrgName }}" } } });
    await call("resolveAInherits", 200, "ResolveMessageText", { ...pr, ctx: A });
    await call("setA", 200, "SetMessageText", { ...pr, ctx: A, settings: { body: { set: "Hallo {{.DisplayName}}, Code {{.Code}} ({{.ExpiresIn}})." } } });
    await call("resolveA", 200, "ResolveMessageText", { ...pr, ctx: A });
    await call("resolveB", 200, "ResolveMessageText", { ...pr, ctx: { orgId: b } });
    await call("resolveOtherLanguage", 200, "ResolveMessageText", { kind: "password_reset", language: "fr", ctx: A });
    await call("resetA", 200, "SetMessageText", { ...pr, ctx: A, settings: { body: { reset: true } } });
    await call("resolveAReset", 200, "ResolveMessageText", { ...pr, ctx: A });
    await call("sms", 200, "ResolveMessageText", { kind: "verify_phone", language: "ja", ctx: A });
    await call("unknownKind", 400, "ResolveMessageText", { kind: "welcome", language: "de", ctx: A });
    await call("unknownLanguage", 400, "SetMessageText", { kind: "invite", language: "xx", ctx: A, settings: { subject: { set: "Hi" } } });
    await call("smsSubject", 400, "SetMessageText", { kind: "verify_phone", language: "de", ctx: A, settings: { subject: { set: "Hi" } } });
    await call("foreignPlaceholder", 400, "SetMessageText", { kind: "invite", language: "de", ctx: A, settings: { body: { set: "{{.URL}} {{.Code}}" } } });
    await call("typo", 400, "SetMessageText", { ...pr, ctx: A, settings: { subject: { set: "Hallo {{.DisplayNam}}" } } });
    await call("withoutCode", 400, "SetMessageText", { kind: "verify_phone", language: "de", ctx: A, settings: { body: { set: "Hallo {{.DisplayName}}" } } });
    await call("emptyChange", 400, "SetMessageText", { ...pr, ctx: A, settings: { subject: {} } });
    await call("resetFalse", 400, "SetMessageText", { ...pr, ctx: A, settings: { subject: { reset: false } } });
    await call("plainUserSet", 403, "SetMessageText", { ...pr, ctx: A, settings: { subject: { reset: true } } }, plainUser);
    await call("plainUserResolveA", 403, "ResolveMessageText", { ...pr, ctx: A }, plainUser);
    await call("instancePlainUserResolve", 200, "ResolveMessageText", pr, plainUser);
    await call("unauthenticated", 401, "ResolveMessageText", pr, "");
    await call("unknownOrg", 404, "ResolveMessageText", { ...pr, ctx: { orgId: "no-such-org" } });
    await call("instanceReset", 200, "SetMessageText", { ...pr, settings: { subject: { reset: true } } });
    await call("resolveAFinally", 200, "ResolveMessageText", { ...pr, ctx: A });
    return { steps, ids: { orgA: a, orgB: b, instance: server.instanceId } };
  }

  it("sets, inherits and resets with owners, and validates, alike over gRPC, gRPC-web, Connect and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));
    const { steps: g, ids } = byProtocol.get("grpc")!;
    const r = (step: string) => g[step]!.result;
    const m = (step: string): Msg => ok(r(step), step);
    const I = instanceOwner(server.instanceId);
    const de = DEFAULT_TEXTS.de.password_reset;

    expect(m("resolveDefault")).toEqual({
      details: { owner: orgOwner(ids.orgA) },
      settings: { subject: { value: de.subject, owner: SYSTEM_OWNER }, body: { value: de.body, owner: SYSTEM_OWNER } },
      placeholders: PLACEHOLDERS,
    });
    expect(m("instanceSet")).toEqual({ details: { sequence: expect.any(String), changeDate: expect.any(String), owner: I } });
    const inherited = { subject: { value: "Neues Passwort für {{ .OrgName }}", owner: I }, body: { value: de.body, owner: SYSTEM_OWNER } };
    expect(m("resolveAInherits").settings).toEqual(inherited);
    expect(m("setA")).toEqual({ details: { sequence: "1", changeDate: expect.any(String), owner: orgOwner(ids.orgA) } });
    expect(m("resolveA")).toEqual({
      details: m("setA").details,
      settings: { subject: inherited.subject, body: { value: "Hallo {{.DisplayName}}, Code {{.Code}} ({{.ExpiresIn}})." } },
      placeholders: PLACEHOLDERS,
    });
    expect(m("resolveB").settings).toEqual(inherited);
    expect(m("resolveOtherLanguage").settings.subject).toEqual({ value: DEFAULT_TEXTS.fr.password_reset.subject, owner: SYSTEM_OWNER });
    expect(m("resetA").details).toMatchObject({ sequence: "2", owner: orgOwner(ids.orgA) });
    expect(m("resolveAReset").settings).toEqual(inherited);
    expect(m("sms")).toEqual({
      details: { owner: orgOwner(ids.orgA) },
      settings: { body: { value: DEFAULT_TEXTS.ja.verify_phone.body, owner: SYSTEM_OWNER } },
      placeholders: PLACEHOLDERS.slice(0, 4),
    });
    const message = (step: string) => failed(r(step), Code.InvalidArgument, step);
    expect(message("unknownKind")).toBe(
      'kind: "welcome" is no kind of message; kinds are verify_email, verify_phone, password_reset, password_reset_sms, invite, password_changed, otp_email, otp_sms',
    );
    expect(message("unknownLanguage")).toBe('language: language "xx" is not supported; supported are en, de, fr, it, es, pt, nl, pl, ja, zh');
    expect(message("smsSubject")).toBe("subject: verify_phone messages are sent by SMS, which has no subject");
    expect(message("foreignPlaceholder")).toContain("body: {{.Code}} is no placeholder of invite messages");
    expect(message("typo")).toContain("subject: {{.DisplayNam}} is no placeholder of password_reset messages");
    expect(message("withoutCode")).toBe("body: verify_phone messages must contain {{.Code}}");
    for (const step of ["emptyChange", "resetFalse"]) failed(r(step), Code.InvalidArgument, step);
    failed(r("plainUserSet"), Code.PermissionDenied);
    failed(r("plainUserResolveA"), Code.PermissionDenied);
    expect(m("instancePlainUserResolve").settings.body.value).toBe(de.body);
    failed(r("unauthenticated"), Code.Unauthenticated);
    failed(r("unknownOrg"), Code.NotFound);
    expect(m("resolveAFinally").settings).toEqual(m("resolveDefault").settings);

    // The instance's sequences move with every protocol's run.
    const comparableStep = (step: string, result: CallResult, theirs: Record<string, string>) =>
      comparable(result, theirs, { alsoVolatile: step.startsWith("instance") ? ["sequence"] : [] });
    for (const [protocol, { steps, ids: theirs }] of byProtocol) {
      expect(Object.keys(steps), protocol).toEqual(Object.keys(g));
      for (const [step, { result, status }] of Object.entries(steps)) {
        expect(comparableStep(step, result, theirs), `${protocol} ${step}`).toEqual(comparableStep(step, g[step]!.result, ids));
        if (!result.ok && step !== "unauthenticated") expect(result.message, `${protocol} ${step}`).toBe((g[step]!.result as { message: string }).message);
        if (protocol === "rest") expect(result.httpStatus, `rest ${step}: ${JSON.stringify(result)}`).toBe(status);
      }
    }
  });

  it("serves PATCH and GET /settings/v3alpha/message_texts/{kind}/{language}, errors as rpcStatus", async () => {
    const org = await createOrg(server, "mt raw");
    const rest = (path: string, init: RequestInit = {}) =>
      fetch(`${server.baseUrl}/settings/v3alpha/message_texts/${path}`, {
        ...init,
        headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
      });
    const patched = await rest(`invite/nl?ctx.orgId=${org}`, { method: "PATCH", body: JSON.stringify({ subject: { set: "Welkom bij {{.OrgName}}" } }) });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as Msg).details).toMatchObject({ sequence: "1", owner: orgOwner(org) });
    const got = await rest(`invite/nl?ctx.orgId=${org}`);
    expect(got.status).toBe(200);
    expect(((await got.json()) as Msg).settings).toEqual({
      subject: { value: "Welkom bij {{.OrgName}}" },
      body: { value: DEFAULT_TEXTS.nl.invite.body, owner: SYSTEM_OWNER },
    });
    for (const [path, init] of [
      [`nope/nl?ctx.orgId=${org}`, {}],
      [`invite/NL?ctx.orgId=${org}`, {}],
      [`invite/nl?ctx.orgId=${org}`, { method: "PATCH", body: JSON.stringify({ body: { set: "no link" } }) }],
      [`invite/nl?ctx.orgId=${org}`, { method: "PATCH", body: "{not json" }],
    ] as const) {
      const res = await rest(path, init);
      expect(res.status, path).toBe(400);
      const body = (await res.json()) as JsonObject;
      expect(Object.keys(body).sort(), path).toEqual(["code", "details", "message"]);
      expect(body.code, path).toBe(Code.InvalidArgument);
    }
  });

  it("bounds subjects to 200 characters on one line, bodies to 10,000, SMS bodies to 1,600", async () => {
    const A = { orgId: await createOrg(server, "mt bounds") };
    const long = (n: number, with_: string) => with_ + "x".repeat(n - with_.length);
    for (const protocol of ["connect", "rest"] as const) {
      ok(await set("verify_email", "it", { subject: { set: long(200, "é") } }, A, protocol), protocol);
      failed(await set("verify_email", "it", { subject: { set: long(201, "é") } }, A, protocol), Code.InvalidArgument, protocol);
      failed(await set("verify_email", "it", { subject: { set: "two\nlines" } }, A, protocol), Code.InvalidArgument, protocol);
      ok(await set("verify_email", "it", { body: { set: long(10_000, "{{.Code}}") } }, A, protocol), protocol);
      failed(await set("verify_email", "it", { body: { set: long(10_001, "{{.Code}}") } }, A, protocol), Code.InvalidArgument, protocol);
      ok(await set("verify_email", "it", { body: { set: long(1_601, "{{.Code}}") } }, A, protocol), protocol);
      ok(await set("verify_phone", "it", { body: { set: long(1_600, "{{.Code}}") } }, A, protocol), protocol);
      const sms = failed(await set("verify_phone", "it", { body: { set: long(1_601, "{{.Code}}") } }, A, protocol), Code.InvalidArgument, protocol);
      expect(sms, protocol).toContain("the body of an SMS (verify_phone) has at most 1600 characters");
      failed(await set("verify_email", "it", { body: { set: "" } }, A, protocol), Code.InvalidArgument, protocol);
    }
  });

  it("messageFor writes with the organization's text over the instance's over the system's over the default", async () => {
    const db = server.service.store.db;
    const a = await createOrg(server, "mt for A");
    const b = await createOrg(server, "mt for B");
    const render = async (orgId: string, kindName: "password_reset" | "verify_phone", language: "en" | "de" = "en") =>
      messageFor(db, { instanceId: server.instanceId, orgId, kind: kindName, language, data: { ...DATA, OrgName: orgId === a ? "A" : "B" } });
    const email = async (orgId: string, language: "en" | "de" = "en") => (await render(orgId, "password_reset", language)) as RenderedEmail;
    expect((await email(a)).subject).toBe("Reset your password for A");
    try {
      ok(await set("password_reset", "en", { subject: { set: "System: {{.OrgName}}" }, body: { set: "System {{.Code}}" } }, SYSTEM));
      expect(await email(a)).toMatchObject({ subject: "System: A", text: "System K7PX4Q\n" });
      ok(await set("password_reset", "en", { body: { set: "Instance <{{.DisplayName}}> {{.URL}}" } }));
      ok(await set("password_reset", "en", { subject: { set: "Org {{.OrgName}}" } }, { orgId: a }));
      ok(await set("verify_phone", "en", { body: { set: "A: {{.Code}}" } }, { orgId: a }));
      expect(await email(a)).toMatchObject({ channel: "email", subject: "Org A", text: `Instance <Ada> ${DATA.URL}\n` });
      expect((await email(a)).html).toContain(`Instance &lt;Ada&gt; <a href="${DATA.URL}"`);
      expect(await email(b)).toMatchObject({ subject: "System: B", text: `Instance <Ada> ${DATA.URL}\n` });
      expect(await render(a, "verify_phone")).toEqual({ channel: "sms", sms: "A: K7PX4Q" });
      expect(await render(b, "verify_phone")).toEqual({ channel: "sms", sms: "Hello Ada, your B verification code is K7PX4Q. It is valid for 1 hour." });
      // Other languages keep their own texts.
      expect((await email(a, "de")).subject).toBe("Passwort für A zurücksetzen");
    } finally {
      ok(await set("password_reset", "en", { subject: { reset: true }, body: { reset: true } }, SYSTEM));
      ok(await set("password_reset", "en", { body: { reset: true } }));
    }
    expect((await email(b)).subject).toBe("Reset your password for B");
  });

  it("messageLanguage: the user's language when supported and allowed, else the organization's default, else the instance's", async () => {
    const db = server.service.store.db;
    const a = await createOrg(server, "mt lang A");
    const b = await createOrg(server, "mt lang B");
    const languages = languageClient(server);
    const of = (orgId: string, preferredLanguage?: string) =>
      messageLanguage(db, { instanceId: server.instanceId, orgId, ...(preferredLanguage !== undefined && { preferredLanguage }) });
    try {
      ok(await languages.set({ defaultLanguage: { key: "de" } }, undefined, server.adminToken));
      expect([await of(a), await of(a, "fr-CA"), await of(a, "xx"), await of(a, "")]).toEqual(["de", "fr", "de", "de"]);
      ok(await languages.set({ defaultLanguage: { key: "it" } }, { orgId: a }, server.adminToken));
      expect([await of(a), await of(b), await of(a, "PL")]).toEqual(["it", "de", "pl"]);
      ok(await languages.set({ restrictedLanguages: { languages: langs("de", "it") } }, undefined, server.adminToken));
      expect([await of(a, "fr"), await of(b, "fr"), await of(b, "it")]).toEqual(["it", "de", "it"]);
    } finally {
      ok(await languages.set({ defaultLanguage: { key: "" }, restrictedLanguages: { languages: [] } }, undefined, server.adminToken));
    }
  });

  it("records each change as a settings.message_text.<kind>.<language>.set event that executions may name; gated by multitenancy_settings", async () => {
    const org = await createOrg(server, "mt events");
    ok(await set("invite", "pt", { subject: { set: "Olá {{.DisplayName}}" } }, { orgId: org }));
    const events = await server.service.store.db
      .selectFrom("events")
      .select(["aggregate_type", "event_type"])
      .where("aggregate_id", "=", org)
      .where("aggregate_type", "like", "settings.%")
      .execute();
    expect(events).toEqual([{ aggregate_type: "settings.message_text.invite.pt", event_type: "settings.message_text.invite.pt.set" }]);
    expect(EVENT_TYPES).toContain("settings.message_text.invite.pt.set");
    await setInstanceFlag(server, server.instanceId, "multitenancy_settings", false);
    try {
      expect(failed(await client().call("ResolveMessageText", { kind: "invite", language: "pt" }, plainUser), Code.FailedPrecondition)).toContain(
        "multitenancy_settings",
      );
    } finally {
      await setInstanceFlag(server, server.instanceId, "multitenancy_settings", undefined);
    }
  });
});
