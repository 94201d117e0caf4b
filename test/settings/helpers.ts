import type { JsonObject } from "@bufbuild/protobuf";
import { expect } from "vitest";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformFeatureSettings } from "../../gen/platform/settings/feature/v3alpha/feature_service_pb.js";
import { PlatformLanguageSettings } from "../../gen/platform/settings/language/v3alpha/language_service_pb.js";
import { BOOTSTRAP_PRINCIPAL } from "../../src/domain/authz/principal.js";
import { addMembership } from "../../src/domain/membership/commands.js";
import { addPersonalAccessToken } from "../../src/domain/pat/commands.js";
import { addMachineUser } from "../../src/domain/user/commands.js";
import { protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import type { TestServer } from "../support/server.js";

export const LANGUAGES = PlatformLanguageSettings;
export const FEATURES = PlatformFeatureSettings;
const ORGS = PlatformOrganizations;

// Answers are read as loose JSON: each test names the fields it looks at.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Msg = any;

export const SUPPORTED = ["en", "de", "fr", "it", "es", "pt", "nl", "pl", "ja", "zh"];
export const langs = (...keys: string[]) => keys.map((key) => ({ key }));

export const SYSTEM_OWNER = { type: "OWNER_TYPE_SYSTEM" } as const;
export const instanceOwner = (id: string) => ({ type: "OWNER_TYPE_INSTANCE", id });
export const orgOwner = (id: string) => ({ type: "OWNER_TYPE_ORG", id });

/** The message of a successful call; fails the test with the whole answer otherwise. */
export function ok(r: CallResult, label = ""): Msg {
  expect(r, `${label} ${JSON.stringify(r)}`).toMatchObject({ ok: true });
  return (r as { message: Msg }).message;
}

/** A failed call with this code; returns its message text. */
export function failed(r: CallResult, code: number, label = ""): string {
  expect(r, `${label} ${JSON.stringify(r)}`).toMatchObject({ ok: false, code });
  return (r as { message: string }).message;
}

/** The resolved settings with the proto3 JSON defaults an empty list or owner drops made explicit. */
export function resolvedLanguages(m: Msg) {
  const s = m.settings ?? {};
  const list = (v: Msg) => ({ value: v?.value ?? [], ...(v?.owner && { owner: v.owner }) });
  return {
    defaultLanguage: { value: s.defaultLanguage?.value ?? "", ...(s.defaultLanguage?.owner && { owner: s.defaultLanguage.owner }) },
    restrictedLanguages: list(s.restrictedLanguages),
    supportedLanguages: list(s.supportedLanguages),
  };
}

/** Settings Details with the proto3 JSON defaults filled in. */
export function details(m: Msg) {
  const d = m.details ?? {};
  return { sequence: Number(d.sequence ?? 0), changeDate: d.changeDate as string | undefined, owner: d.owner };
}

/** Language settings calls on one protocol. */
export function languageClient(server: Pick<TestServer, "baseUrl">, protocol: Protocol = "grpc", baseUrl = server.baseUrl) {
  const client = protocolClient(LANGUAGES, protocol, baseUrl);
  return {
    set: (settings: JsonObject, ctx: JsonObject | undefined, token: string) => client.call("SetLanguages", { settings, ...(ctx && { ctx }) }, token),
    resolve: (ctx: JsonObject | undefined, token: string) => client.call("ResolveLanguages", { ...(ctx && { ctx }) }, token),
  };
}

/** Feature settings calls on one protocol. */
export function featureClient(server: Pick<TestServer, "baseUrl">, protocol: Protocol = "grpc", baseUrl = server.baseUrl) {
  const client = protocolClient(FEATURES, protocol, baseUrl);
  return {
    set: (settings: JsonObject, ctx: JsonObject | undefined, token: string) => client.call("SetFeatures", { settings, ...(ctx && { ctx }) }, token),
    resolve: (ctx: JsonObject | undefined, token: string) => client.call("ResolveFeatures", { ...(ctx && { ctx }) }, token),
  };
}

/** A new organization of the server's first instance, made through the API. */
export async function createOrg(server: TestServer, name: string): Promise<string> {
  const m = ok(
    await protocolClient(ORGS, "grpc", server.baseUrl).call("CreateOrganization", { organization: { name } }, server.adminToken),
    `create org ${name}`,
  );
  return String(m.details.id);
}

/** A machine user that lives in the given organization (not the default one), with memberships and a token. */
export async function createUserIn(
  server: TestServer,
  orgId: string,
  roles: { context: "instance" | "org"; contextId: string; roles: string[] }[] = [],
): Promise<{ userId: string; token: string }> {
  return server.service.store.db.transaction().execute(async (tx) => {
    const actor = { instanceId: server.instanceId, userId: "test" };
    const user = await addMachineUser(tx, actor, { orgId, username: `org-user-${Math.random().toString(36).slice(2)}`, name: "test" });
    for (const r of roles) {
      await addMembership(tx, actor, { userId: user.id, contextType: r.context, contextId: r.contextId, roles: r.roles }, BOOTSTRAP_PRINCIPAL);
    }
    const pat = await addPersonalAccessToken(tx, actor, { userId: user.id, expiresAt: new Date(Date.now() + 3600_000) });
    return { userId: user.id, token: pat.token };
  });
}
