import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformIdentityProviders } from "../../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import { SecretBox } from "../../src/crypto/encryption.js";
import { PROTOCOLS, protocolClient, type CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { okMessage } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { LogCapture, startLoggedServer, type LoggedServer } from "../telemetry/support.js";
import { ACTIVE, DEACTIVATE, INHERIT, createOrg, gitlab, idpClient, instanceOwner, orgOwner, systemOwner, type Idps } from "./helpers.js";

const MASTER_KEY = "0123456789abcdef0123456789abcdef";

interface TypeCase {
  /** The RPC name part: Create<name>IDP. */
  name: string;
  providerType: string;
  path: string;
  /** The type's own configuration fields, besides clientId, clientSecret and scopes. */
  extra: JsonObject;
  /** A patch of one type-specific field and the value it leads to. */
  extraPatch: JsonObject;
  /** URI fields that must be URIs. */
  uris: string[];
  /** The type's own settings that say where the client secret goes, with other values (clientId aside). */
  aimed: JsonObject;
  /** The type's own settings that do not, with other values. */
  unaimed: JsonObject;
  /** The write-only field that holds the type's secret; clientSecret when absent. */
  secretField?: "privateKey";
}

/** Apple's secret is a P-256 key (PKCS#8 PEM): one per tag, so a tag names the same key each time. */
const appleKeys = new Map<string, string>();
const appleKey = (tag: string) => {
  if (!appleKeys.has(tag)) appleKeys.set(tag, generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }) as string);
  return appleKeys.get(tag)!;
};
const fieldOf = (t: TypeCase) => t.secretField ?? "clientSecret";
/** The secret a test means by `tag`, for the type. */
const secretFor = (t: TypeCase, tag: string) => (t.secretField ? appleKey(tag) : tag);
/** The secret as a configuration field. */
const sec = (t: TypeCase, tag: string): JsonObject => ({ [fieldOf(t)]: secretFor(t, tag) });
/** What of the secret a text would show, however it escapes line breaks: a PEM's first base64 line. */
const markOf = (secret: string) => (secret.startsWith("-----BEGIN") ? secret.split("\n")[1]! : secret);

const GUID = "72f988bf-86f1-41af-91ab-2d7cd011db47";

const TYPES: TypeCase[] = [
  { name: "GitLab", providerType: "PROVIDER_TYPE_GITLAB", path: "gitlab", extra: {}, extraPatch: {}, uris: [], aimed: {}, unaimed: {} },
  {
    name: "GitLabSelfHosted",
    providerType: "PROVIDER_TYPE_GITLAB_SELF_HOSTED",
    path: "gitlab_self_hosted",
    extra: { issuer: "https://gitlab.example.com" },
    extraPatch: { issuer: "https://git.example.org/base" },
    uris: ["issuer"],
    aimed: { issuer: "https://gitlab.elsewhere.example" },
    unaimed: {},
  },
  {
    name: "OIDC",
    providerType: "PROVIDER_TYPE_OIDC",
    path: "oidc",
    extra: { issuer: "https://issuer.example.com", isIdTokenMapping: true },
    extraPatch: { issuer: "https://login.example.net", isIdTokenMapping: false },
    uris: ["issuer"],
    aimed: { issuer: "https://issuer.elsewhere.example" },
    unaimed: { isIdTokenMapping: false },
  },
  {
    name: "OAuth",
    providerType: "PROVIDER_TYPE_OAUTH",
    path: "oauth",
    extra: {
      authorizationEndpoint: "https://oauth.example.com/authorize",
      tokenEndpoint: "https://oauth.example.com/token",
      userEndpoint: "https://oauth.example.com/user",
      idAttribute: "sub",
    },
    extraPatch: { tokenEndpoint: "https://oauth.example.com/v2/token", idAttribute: "user_id" },
    uris: ["authorizationEndpoint", "tokenEndpoint", "userEndpoint"],
    aimed: {
      authorizationEndpoint: "https://elsewhere.example/authorize",
      tokenEndpoint: "https://elsewhere.example/token",
      userEndpoint: "https://elsewhere.example/user",
    },
    unaimed: { idAttribute: "user_id" },
  },
  { name: "GitHub", providerType: "PROVIDER_TYPE_GITHUB", path: "github", extra: {}, extraPatch: {}, uris: [], aimed: {}, unaimed: {} },
  { name: "Google", providerType: "PROVIDER_TYPE_GOOGLE", path: "google", extra: {}, extraPatch: {}, uris: [], aimed: {}, unaimed: {} },
  {
    name: "AzureAD",
    providerType: "PROVIDER_TYPE_AZURE_AD",
    path: "azure_ad",
    extra: { tenant: { tenantType: "AZURE_AD_TENANT_TYPE_COMMON" }, isEmailVerified: true },
    extraPatch: { tenant: { tenantId: "contoso.onmicrosoft.com" }, isEmailVerified: false },
    uris: [],
    // The secret goes to Microsoft whatever the tenant: the tenant only narrows whose accounts sign in.
    aimed: {},
    unaimed: { tenant: { tenantId: GUID }, isEmailVerified: false },
  },
  {
    name: "Apple",
    providerType: "PROVIDER_TYPE_APPLE",
    path: "apple",
    extra: { teamId: "TEAM123456", keyId: "KEY1234567" },
    extraPatch: { keyId: "KEY7654321" },
    uris: [],
    aimed: { teamId: "TEAM999999", keyId: "KEY9999999" },
    unaimed: {},
    secretField: "privateKey",
  },
];

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** A proto3 JSON config echo: false booleans are not printed. */
/** A create request's provider, as `base` builds it: a test changes a field of either part. */
type IdpRequest = { idp: JsonObject; config: JsonObject };

const printed = (config: JsonObject) => Object.fromEntries(Object.entries(config).filter(([, v]) => v !== false));

describe.each(DATABASE_KINDS)("identity provider types (%s)", (kind) => {
  let server: TestServer;
  let idps: Idps;
  beforeAll(async () => {
    server = await startTestServer(kind);
    idps = idpClient(server.baseUrl, server.adminToken);
  });
  afterAll(() => server?.close());

  describe.each(TYPES)("$name", (t) => {
    const base = (name: string): IdpRequest => ({
      idp: { name, options: { isAutoCreation: true, autoLinking: "AUTO_LINKING_OPTION_EMAIL" } },
      config: { clientId: `${t.path}-client`, ...sec(t, `secret-${t.path}`), scopes: ["openid", "profile"], ...t.extra },
    });
    let id: string;
    let changeDate: string;

    it("creates (201 over REST) and reads back the configuration without the secret", async () => {
      const rest = idpClient(server.baseUrl, server.adminToken, "rest");
      const made = await rest.call(`Create${t.name}IDP`, { idp: base(`${t.name} provider`) });
      expect(made).toMatchObject({ ok: true, httpStatus: 201 });
      const details = okMessage(made).details;
      expect(details).toEqual({ id: expect.any(String), sequence: "1", changeDate: expect.any(String), resourceOwner: instanceOwner(server.instanceId) });
      id = details.id;
      changeDate = details.changeDate;
      const expected = {
        idp: {
          details: { id, sequence: "1", changeDate, resourceOwner: instanceOwner(server.instanceId) },
          state: ACTIVE,
          type: t.providerType,
          idp: {
            idp: { name: `${t.name} provider`, statePolicy: INHERIT, options: { isAutoCreation: true, autoLinking: "AUTO_LINKING_OPTION_EMAIL" } },
            config: printed({ clientId: `${t.path}-client`, scopes: ["openid", "profile"], ...t.extra }),
          },
        },
      };
      expect(await idps.ok(`Get${t.name}IDP`, { id })).toEqual(expected);
      expect(await rest.ok(`Get${t.name}IDP`, { id })).toEqual(expected);
      const raw = await fetch(`${server.baseUrl}/resources/v3alpha/idps/${t.path}/${id}`, { headers: { authorization: `Bearer ${server.adminToken}` } });
      expect(raw.status).toBe(200);
      expect(await raw.text()).not.toContain(markOf(secretFor(t, `secret-${t.path}`)));
      // GetIDP: type-agnostic only.
      expect(await idps.ok("GetIDP", { id })).toEqual({ idp: { ...expected.idp, idp: expected.idp.idp.idp } });
    });

    it("a patch repeating every stored value is no change", async () => {
      const made = await idps.ok(`Create${t.name}IDP`, { idp: base(`${t.name} same`) });
      const mid = made.details.id as string;
      const before = await idps.ok(`Get${t.name}IDP`, { id: mid });
      const r = await idps.ok(`Patch${t.name}IDP`, {
        id: mid,
        idp: {
          idp: { name: `${t.name} same`, statePolicy: INHERIT, options: { isAutoCreation: true, autoLinking: "AUTO_LINKING_OPTION_EMAIL" } },
          config: { clientId: `${t.path}-client`, scopes: ["openid", "profile"], ...t.extra },
        },
      });
      expect(r.details).toEqual(made.details);
      // Options given with default values spelled out are the same options.
      const spelled = await idps.ok(`Patch${t.name}IDP`, {
        id: mid,
        idp: { idp: { options: { isManualLinkingAllowed: false, isAutoCreation: true, autoLinking: "AUTO_LINKING_OPTION_EMAIL", isAutoUpdate: false } } },
      });
      expect(spelled.details).toEqual(made.details);
      expect(await idps.ok(`Get${t.name}IDP`, { id: mid })).toEqual(before);
      if (t.name === "OIDC") {
        // Created without the mapping flag (false); patching it to false is no change either.
        const plain = await idps.ok("CreateOIDCIDP", {
          idp: { idp: { name: "OIDC no mapping" }, config: { clientId: "c", clientSecret: "s", issuer: "https://issuer.example.com" } },
        });
        const p = await idps.ok("PatchOIDCIDP", { id: plain.details.id, idp: { config: { isIdTokenMapping: false } } });
        expect(p.details).toEqual(plain.details);
        await idps.ok("DeleteIDP", { id: plain.details.id });
      }
      await idps.ok("DeleteIDP", { id: mid });
    });

    it("is NotFound through another type's Get and Patch", async () => {
      for (const other of TYPES.filter((o) => o.name !== t.name)) {
        expect(await idps.call(`Get${other.name}IDP`, { id }), other.name).toMatchObject({ ok: false, code: Code.NotFound });
        expect(await idps.call(`Patch${other.name}IDP`, { id, idp: { idp: { name: "wrong type" } } }), other.name).toMatchObject({
          ok: false,
          code: Code.NotFound,
        });
      }
      expect((await idps.ok(`Get${t.name}IDP`, { id })).idp.idp.idp.name).toBe(`${t.name} provider`);
    });

    it("patches partially: name, client id, type fields; scopes only when not empty", async () => {
      const get = async () => (await idps.ok(`Get${t.name}IDP`, { id })).idp;
      const p1 = await idps.ok(`Patch${t.name}IDP`, {
        id,
        idp: { idp: { name: `${t.name} renamed` }, config: { clientId: "new-client", ...sec(t, `secret-${t.path}`) } },
      });
      expect(p1.details).toEqual({ id, sequence: "2", changeDate: expect.any(String), resourceOwner: instanceOwner(server.instanceId) });
      let got = await get();
      expect(got.details.sequence).toBe("2");
      expect(got.idp).toEqual({
        idp: { name: `${t.name} renamed`, statePolicy: INHERIT, options: { isAutoCreation: true, autoLinking: "AUTO_LINKING_OPTION_EMAIL" } },
        config: printed({ clientId: "new-client", scopes: ["openid", "profile"], ...t.extra }),
      });
      // An empty scope list keeps the scopes.
      const p2 = await idps.ok(`Patch${t.name}IDP`, { id, idp: { config: { scopes: [] } } });
      expect(p2.details.sequence).toBe("2");
      expect((await get()).idp.config.scopes).toEqual(["openid", "profile"]);
      // A non-empty one replaces them.
      const p3 = await idps.ok(`Patch${t.name}IDP`, { id, idp: { config: { scopes: ["email"] } } });
      expect(p3.details.sequence).toBe("3");
      expect((await get()).idp.config.scopes).toEqual(["email"]);
      if (Object.keys(t.extraPatch).length > 0) {
        const p4 = await idps.ok(`Patch${t.name}IDP`, { id, idp: { config: { ...t.extraPatch, ...sec(t, `secret-${t.path}`) } } });
        expect(p4.details.sequence).toBe("4");
        got = await get();
        expect(got.idp.config).toEqual(printed({ clientId: "new-client", scopes: ["email"], ...t.extra, ...t.extraPatch }));
      }
      // Options are replaced as a whole.
      const seq = Number((await get()).details.sequence);
      await idps.ok(`Patch${t.name}IDP`, { id, idp: { idp: { options: { isManualLinkingAllowed: true } } } });
      got = await get();
      expect(got.details.sequence).toBe(String(seq + 1));
      expect(got.idp.idp.options).toEqual({ isManualLinkingAllowed: true });
    });

    it("a patch that changes nothing keeps the details", async () => {
      const before = await idps.ok(`Get${t.name}IDP`, { id });
      const same = before.idp.idp;
      for (const change of [
        {},
        { idp: {} },
        { config: {} },
        { idp: { name: same.idp.name } },
        { idp: { options: same.idp.options, statePolicy: INHERIT } },
        { config: { clientId: same.config.clientId, scopes: same.config.scopes } },
      ] as JsonObject[]) {
        const r = await idps.ok(`Patch${t.name}IDP`, { id, idp: change });
        expect(r.details, JSON.stringify(change)).toEqual(before.idp.details);
      }
      expect(await idps.ok(`Get${t.name}IDP`, { id })).toEqual(before);
    });

    it("a new secret is a change, and is never returned", async () => {
      const before = await idps.ok(`Get${t.name}IDP`, { id });
      const r = await idps.ok(`Patch${t.name}IDP`, { id, idp: { config: sec(t, `rotated-${t.path}`) } });
      expect(Number(r.details.sequence)).toBe(Number(before.idp.details.sequence) + 1);
      const after = await idps.ok(`Get${t.name}IDP`, { id });
      expect(after.idp.idp).toEqual(before.idp.idp);
      expect(JSON.stringify(after)).not.toContain(markOf(secretFor(t, `rotated-${t.path}`)));
      const row = await server.service.store.db.selectFrom("idps").select("client_secret").where("id", "=", id).executeTakeFirstOrThrow();
      expect(new SecretBox(MASTER_KEY).decrypt(row.client_secret)).toBe(secretFor(t, `rotated-${t.path}`));
    });

    it.each(["grpc", "rest"] as const)("keeps the client secret only for the servers and the client it was given for (%s)", async (protocol) => {
      const api = idpClient(server.baseUrl, server.adminToken, protocol);
      const made = await api.ok(`Create${t.name}IDP`, { idp: base(`${t.name} aimed ${protocol}`) });
      const aid = made.details.id as string;
      const before = await api.ok(`Get${t.name}IDP`, { id: aid });
      const secret = async () => {
        const row = await server.service.store.db.selectFrom("idps").select("client_secret").where("id", "=", aid).executeTakeFirstOrThrow();
        return new SecretBox(MASTER_KEY).decrypt(row.client_secret);
      };
      const aimed: JsonObject = { clientId: "another-client", ...t.aimed };
      for (const [field, value] of Object.entries(aimed)) {
        const refused = await api.call(`Patch${t.name}IDP`, { id: aid, idp: { idp: { name: "moved" }, config: { [field]: value } } });
        expect(refused, field).toMatchObject({
          ok: false,
          code: Code.InvalidArgument,
          message: expect.stringMatching(new RegExp(`^changing ${field} needs ${fieldOf(t)} `)),
        });
        if (protocol === "rest") expect(refused.httpStatus).toBe(400);
      }
      expect(await api.ok(`Get${t.name}IDP`, { id: aid }), "nothing stored changed").toEqual(before);
      expect(await secret()).toBe(secretFor(t, `secret-${t.path}`));
      // Other settings, and aiming ones given as they are, keep it.
      await api.ok(`Patch${t.name}IDP`, {
        id: aid,
        idp: { idp: { name: "renamed" }, config: { clientId: `${t.path}-client`, scopes: ["email"], ...t.extra, ...t.unaimed } },
      });
      expect(await secret()).toBe(secretFor(t, `secret-${t.path}`));
      // With the secret they change.
      await api.ok(`Patch${t.name}IDP`, { id: aid, idp: { config: { ...aimed, ...sec(t, "given-again") } } });
      expect((await api.ok(`Get${t.name}IDP`, { id: aid })).idp.idp.config).toMatchObject(aimed);
      expect(await secret()).toBe(secretFor(t, "given-again"));
      await api.ok("DeleteIDP", { id: aid });
    });

    it("validates the configuration, naming the field", async () => {
      const invalid = async (change: (req: IdpRequest) => void, field: string) => {
        const req = base(`${t.name} invalid`);
        change(req);
        const r = await idps.call(`Create${t.name}IDP`, { idp: req });
        expect(r, `${field}: ${JSON.stringify(r)}`).toMatchObject({ ok: false, code: Code.InvalidArgument });
        expect((r as { message: string }).message).toContain(field);
      };
      if (t.secretField) {
        await invalid((r) => delete r.config.privateKey, "private_key");
        await invalid((r) => (r.config.privateKey = "s".repeat(4001)), "private_key");
        const pkcs8 = (key: KeyObject) => key.export({ type: "pkcs8", format: "pem" }) as string;
        // Not a PEM; SEC1 rather than PKCS#8; another curve; RSA; a public key; a PEM cut short.
        for (const key of [
          "not a key",
          generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "sec1", format: "pem" }) as string,
          pkcs8(generateKeyPairSync("ec", { namedCurve: "P-384" }).privateKey),
          pkcs8(generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey),
          generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ type: "spki", format: "pem" }) as string,
          appleKey("secret-apple").slice(0, 120) + "\n-----END PRIVATE KEY-----\n",
        ]) {
          await invalid((r) => (r.config.privateKey = key), "privateKey must be the PKCS#8 PEM of an EC P-256 key");
        }
      } else {
        await invalid((r) => delete r.config.clientSecret, "client_secret");
        await invalid((r) => (r.config.clientSecret = "s".repeat(201)), "client_secret");
      }
      if (t.name === "AzureAD") {
        await invalid((r) => delete r.config.tenant, "tenant");
        await invalid((r) => (r.config.tenant = {}), "tenant");
        await invalid((r) => (r.config.tenant = { tenantType: "AZURE_AD_TENANT_TYPE_UNSPECIFIED" }), "tenant_type");
        for (const bad of ["common", "not a tenant", "72f988bf-86f1-41af-91ab", "contoso.onmicrosoft.com.", "https://contoso.example"]) {
          await invalid((r) => (r.config.tenant = { tenantId: bad }), "tenant_id");
        }
      }
      if (t.name === "Apple") {
        for (const bad of ["", "team123456", "TEAM12345", "TEAM1234567", "TEAM-12345"]) await invalid((r) => (r.config.teamId = bad), "team_id");
        for (const bad of ["", "key1234567", "KEY123456", "KEY 123456"]) await invalid((r) => (r.config.keyId = bad), "key_id");
      }
      await invalid((r) => delete r.config.clientId, "client_id");
      await invalid((r) => (r.config.clientId = "c".repeat(201)), "client_id");
      await invalid((r) => (r.config.scopes = Array.from({ length: 21 }, (_, i) => `scope${i}`)), "scopes");
      await invalid((r) => (r.config.scopes = ["openid", ""]), "scopes");
      await invalid((r) => (r.config.scopes = ["x".repeat(101)]), "scopes");
      await invalid((r) => (r.idp.name = ""), "name");
      await invalid((r) => (r.idp.name = "n".repeat(201)), "name");
      await invalid((r) => delete (r as Partial<IdpRequest>).config, "config");
      for (const uri of t.uris) {
        await invalid((r) => (r.config[uri] = "not a uri"), snake(uri));
        await invalid((r) => delete r.config[uri], snake(uri));
      }
      if (t.name === "OAuth") await invalid((r) => delete r.config.idAttribute, "id_attribute");
      // The limits themselves pass.
      const edge = base("e".repeat(200));
      if (!t.secretField) edge.config.clientSecret = "s".repeat(200);
      edge.config.clientId = "c".repeat(200);
      edge.config.scopes = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(100, "x"));
      const made = await idps.ok(`Create${t.name}IDP`, { idp: edge });
      expect((await idps.ok(`Get${t.name}IDP`, { id: made.details.id })).idp.idp.config.scopes).toEqual(edge.config.scopes);
      await idps.ok("DeleteIDP", { id: made.details.id });
      // A patch is held to the same limits.
      for (const config of [
        { [fieldOf(t)]: "" },
        { [fieldOf(t)]: "s".repeat(t.secretField ? 4001 : 201) },
        ...(t.secretField ? [{ privateKey: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" }] : []),
        ...(t.name === "AzureAD" ? [{ tenant: { tenantId: "nope" } }, { tenant: {} }] : []),
        ...(t.name === "Apple" ? [{ teamId: "x" }, { keyId: "lower12345" }] : []),
        { clientId: "" },
        { scopes: [""] },
        { scopes: Array.from({ length: 21 }, (_, i) => `s${i}`) },
      ] as JsonObject[]) {
        expect(await idps.call(`Patch${t.name}IDP`, { id, idp: { config } }), JSON.stringify(config)).toMatchObject({ ok: false, code: Code.InvalidArgument });
      }
      for (const uri of t.uris) {
        expect(await idps.call(`Patch${t.name}IDP`, { id, idp: { config: { [uri]: "::nope" } } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      }
      expect(await idps.call(`Patch${t.name}IDP`, { id, idp: { idp: { name: "" } } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    });

    it("is created in the system and in an org context, owned there", async () => {
      const sys = await idps.ok(`Create${t.name}IDP`, { idp: base(`${t.name} system`), ctx: { system: true } });
      expect(sys.details.resourceOwner).toEqual(systemOwner);
      const org = await createOrg(server.baseUrl, server.adminToken, `${t.name} Org`);
      const own = await idps.ok(`Create${t.name}IDP`, { idp: base(`${t.name} org`), ctx: { orgId: org } });
      expect(own.details.resourceOwner).toEqual(orgOwner(org));
      expect((await idps.ok(`Get${t.name}IDP`, { id: own.details.id })).idp).toMatchObject({ details: { resourceOwner: orgOwner(org) }, type: t.providerType });
      expect((await idps.ok(`Get${t.name}IDP`, { id: sys.details.id, ctx: { orgId: org } })).idp).toMatchObject({
        details: { resourceOwner: systemOwner },
        parent: { parent: instanceOwner(server.instanceId), state: ACTIVE },
        type: t.providerType,
      });
      for (const made of [sys, own]) await idps.ok("DeleteIDP", { id: made.details.id });
    });
  });

  describe("access", () => {
    let id: string;
    beforeAll(async () => {
      id = (await idps.ok("CreateGitLabIDP", { idp: gitlab("Access GitLab") })).details.id;
    });

    it("a plain user is denied every RPC", async () => {
      const plain = idpClient(server.baseUrl, (await server.createUser({})).token);
      expect(await plain.call("CreateGitLabIDP", { idp: gitlab("plain") })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await plain.call("GetGitLabIDP", { id })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await plain.call("GetIDP", { id })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await plain.call("PatchGitLabIDP", { id, idp: { idp: { statePolicy: DEACTIVATE } } })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await plain.call("DeleteIDP", { id })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await plain.call("SearchIDPs", {})).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await plain.call("CreateGitLabIDP", { idp: gitlab("plain"), ctx: { system: true } })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await idps.ok("GetGitLabIDP", { id })).toMatchObject({ idp: { details: { sequence: "1" }, idp: { idp: { name: "Access GitLab" } } } });
    });

    it("checks the request context", async () => {
      expect(await idps.call("CreateGitLabIDP", { idp: gitlab("ctx false"), ctx: { system: false } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await idps.call("CreateGitLabIDP", { idp: gitlab("ctx missing org"), ctx: { orgId: "no-such-org" } })).toMatchObject({
        ok: false,
        code: Code.NotFound,
      });
      expect(await idps.call("GetIDP", { id, ctx: { orgId: "no-such-org" } })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await idps.call("GetIDP", { id: "no-such-idp" })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await idps.call("PatchGitLabIDP", { id })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    });

    // The id is looked up before the validation interceptor runs; who may know still gets
    // InvalidArgument for an id outside 1..200 (spec §4), as for targets.
    it("refuses an id outside 1 to 200 characters as InvalidArgument", async () => {
      for (const bad of ["", "x".repeat(201)]) {
        for (const method of ["GetIDP", "GetGitLabIDP", "DeleteIDP"]) {
          expect(await idps.call(method, { id: bad }), `${method} ${bad.length}`).toMatchObject({ ok: false, code: Code.InvalidArgument });
        }
      }
    });

    it("an IAM_OWNER manages providers of its instance and its organizations, not the system's", async () => {
      const iam = idpClient(server.baseUrl, (await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] })).token);
      const org = await createOrg(server.baseUrl, server.adminToken, "IAM Org");
      const own = await iam.ok("CreateGoogleIDP", {
        idp: { idp: { name: "iam org google" }, config: { clientId: "g", clientSecret: "s" } },
        ctx: { orgId: org },
      });
      expect(own.details.resourceOwner).toEqual(orgOwner(org));
      await iam.ok("PatchGoogleIDP", { id: own.details.id, idp: { idp: { name: "iam org google 2" } } });
      expect((await iam.ok("GetGoogleIDP", { id: own.details.id })).idp.idp.idp.name).toBe("iam org google 2");
      await iam.ok("DeleteIDP", { id: own.details.id });
      const sys = (await idps.ok("CreateGitLabIDP", { idp: gitlab("sys for iam"), ctx: { system: true } })).details.id;
      expect(await iam.call("PatchGitLabIDP", { id: sys, idp: { idp: { name: "nope" } } })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await iam.call("DeleteIDP", { id: sys })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await iam.call("SearchIDPs", { ctx: { system: true } })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      await idps.ok("DeleteIDP", { id: sys });
    });

    it("an unauthenticated caller is Unauthenticated", async () => {
      expect(await idps.call("GetIDP", { id }, "")).toMatchObject({ ok: false, code: Code.Unauthenticated });
    });

    it("another instance's admin gets NotFound, never PermissionDenied", async () => {
      const other = await server.createInstance("127.0.0.1");
      const theirs = idpClient(other.baseUrl, other.adminToken);
      for (const [method, req] of [
        ["GetGitLabIDP", { id }],
        ["GetIDP", { id }],
        ["PatchGitLabIDP", { id, idp: { idp: { name: "stolen" } } }],
        ["PatchGitLabIDP", { id, idp: { idp: { statePolicy: DEACTIVATE } } }],
        ["DeleteIDP", { id }],
      ] as [string, JsonObject][]) {
        expect(await theirs.call(method, req), method).toMatchObject({ ok: false, code: Code.NotFound });
        expect(await theirs.call(method, { ...req, ctx: { instanceId: other.instanceId } }), `${method} ctx`).toMatchObject({ ok: false, code: Code.NotFound });
        // Naming our instance or organization does not help.
        expect(await theirs.call(method, { ...req, ctx: { instanceId: server.instanceId } }), `${method} our ctx`).toMatchObject({
          ok: false,
          code: Code.NotFound,
        });
        expect(await theirs.call(method, { ...req, ctx: { orgId: server.defaultOrgId } }), `${method} our org`).toMatchObject({
          ok: false,
          code: Code.NotFound,
        });
      }
      expect(await theirs.call("CreateGitLabIDP", { idp: gitlab("planted"), ctx: { instanceId: server.instanceId } })).toMatchObject({
        ok: false,
        code: Code.NotFound,
      });
      expect(await theirs.call("CreateGitLabIDP", { idp: gitlab("planted"), ctx: { orgId: server.defaultOrgId } })).toMatchObject({
        ok: false,
        code: Code.NotFound,
      });
      expect((await theirs.ok("SearchIDPs", { filters: [{ id: { id } }] })).result ?? []).toEqual([]);
      expect(await idps.ok("GetGitLabIDP", { id })).toMatchObject({ idp: { details: { sequence: "1" }, idp: { idp: { name: "Access GitLab" } } } });
    });

    it("with the feature flag off, every RPC is FailedPrecondition naming the flag", async () => {
      await setInstanceFlag(server, server.instanceId, "multitenancy_resources_api", false);
      try {
        for (const [method, req] of [
          ["CreateGitLabIDP", { idp: gitlab("flag off") }],
          ["GetGitLabIDP", { id }],
          ["GetIDP", { id }],
          ["PatchGitLabIDP", { id, idp: { idp: { name: "x" } } }],
          ["DeleteIDP", { id }],
          ["SearchIDPs", {}],
        ] as [string, JsonObject][]) {
          for (const protocol of ["grpc", "rest"] as const) {
            const r = await idpClient(server.baseUrl, server.adminToken, protocol).call(method, req);
            expect(r, `${protocol} ${method}`).toMatchObject({ ok: false, code: Code.FailedPrecondition, ...(protocol === "rest" && { httpStatus: 400 }) });
            expect((r as { message: string }).message).toContain("multitenancy_resources_api");
          }
        }
      } finally {
        await setInstanceFlag(server, server.instanceId, "multitenancy_resources_api", undefined);
      }
      expect(await idps.ok("GetIDP", { id })).toMatchObject({ idp: { details: { id, sequence: "1" } } });
    });
  });
});

describe.each(DATABASE_KINDS)("client secrets are never disclosed (%s)", (kind) => {
  const logs = new LogCapture();
  let server: LoggedServer;
  /** Every answer of every call in this suite, as text. */
  const answers: string[] = [];
  const SECRETS = TYPES.map((t) => secretFor(t, `Zq9-${t.path}-CLIENT-SECRET-7xK`));
  const ROTATED = TYPES.map((t) => secretFor(t, `Rr4-${t.path}-ROTATED-SECRET-2pW`));
  const INVALID = `Vv8-REJECTED-SECRET-${"x".repeat(190)}`;

  const call = async (protocol: (typeof PROTOCOLS)[number], method: string, req: JsonObject): Promise<CallResult> => {
    const r = await protocolClient(PlatformIdentityProviders, protocol, server.baseUrl).call(method, req, server.adminToken);
    answers.push(JSON.stringify(r));
    return r;
  };

  beforeAll(async () => {
    server = await startLoggedServer(kind, logs);
  });
  afterAll(() => server?.close());

  it("appear in no response, event payload, stored row or log line", async () => {
    const ids: string[] = [];
    for (const [i, t] of TYPES.entries()) {
      for (const protocol of PROTOCOLS) {
        const config = { clientId: `${t.path}-id`, [fieldOf(t)]: SECRETS[i]!, scopes: ["openid"], ...t.extra };
        const made = okMessage(await call(protocol, `Create${t.name}IDP`, { idp: { idp: { name: `${t.name} ${protocol}` }, config } }));
        const id = made.details.id as string;
        ids.push(id);
        okMessage(await call(protocol, `Get${t.name}IDP`, { id }));
        okMessage(await call(protocol, "GetIDP", { id }));
        okMessage(await call(protocol, `Patch${t.name}IDP`, { id, idp: { config: { [fieldOf(t)]: ROTATED[i]!, clientId: `${t.path}-id2` } } }));
        okMessage(await call(protocol, `Get${t.name}IDP`, { id, ctx: { system: true } }));
        // Rejected requests carrying a secret: wrong type, too long, read-only child.
        const other = TYPES[(TYPES.indexOf(t) + 1) % TYPES.length]!;
        // Within the other type's limits: the rejection is the type's, not the validation's.
        const sent = t.secretField && !other.secretField ? markOf(SECRETS[i]!) : SECRETS[i]!;
        expect(await call(protocol, `Patch${other.name}IDP`, { id, idp: { config: { [fieldOf(other)]: sent } } })).toMatchObject({
          ok: false,
          code: Code.NotFound,
        });
        expect(
          await call(protocol, `Create${t.name}IDP`, { idp: { idp: { name: "too long" }, config: { ...config, [fieldOf(t)]: INVALID + "yy" } } }),
        ).toMatchObject({ ok: false, code: Code.InvalidArgument });
      }
    }
    const sys = okMessage(
      await call("grpc", "CreateGitLabIDP", { idp: { idp: { name: "sys" }, config: { clientId: "c", clientSecret: SECRETS[0]! } }, ctx: { system: true } }),
    ).details.id as string;
    const instanceId = (await server.service.store.db.selectFrom("instances").select("id").executeTakeFirstOrThrow()).id;
    for (const protocol of PROTOCOLS) {
      // A secret sent where the configuration is read-only is refused, and not repeated.
      expect(await call(protocol, "PatchGitLabIDP", { id: sys, ctx: { instanceId }, idp: { config: { clientSecret: ROTATED[0]! } } })).toMatchObject({
        ok: false,
        code: Code.FailedPrecondition,
      });
    }
    for (const protocol of PROTOCOLS) {
      const found = okMessage(await call(protocol, "SearchIDPs", { query: { limit: 1000 } }));
      expect(found.result.length).toBeGreaterThanOrEqual(ids.length);
    }
    // REST error bodies, raw.
    const raw = await fetch(`${server.baseUrl}/resources/v3alpha/idps/gitlab`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ idp: { name: "" }, config: { clientId: "c", clientSecret: SECRETS[0], unknownField: 1 } }),
    });
    expect(raw.status).toBe(400);
    answers.push(await raw.text());

    const all = [...SECRETS, ...ROTATED].map(markOf).concat("Vv8-REJECTED");
    const text = answers.join("\n");
    for (const s of all) expect(text, "responses").not.toContain(s);

    const db = server.service.store.db;
    const events = await db
      .selectFrom("events")
      .select(sql<string>`payload::text`.as("payload"))
      .execute();
    expect(events.length).toBeGreaterThan(0);
    const payloads = events.map((e) => e.payload).join("\n");
    for (const s of all) expect(payloads, "event payloads").not.toContain(s);
    expect(payloads).not.toMatch(/(clientSecret|privateKey)"\s*:/);

    const rows = await db.selectFrom("idps").selectAll().execute();
    const box = new SecretBox(MASTER_KEY);
    for (const row of rows) {
      const dump = JSON.stringify(row);
      for (const s of all) expect(dump, "idps row").not.toContain(s);
      expect(row.config).not.toHaveProperty("clientSecret");
      expect(row.config).not.toHaveProperty("privateKey");
    }
    // Each row holds its rotated secret, sealed.
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const [n, id] of ids.entries()) {
      const i = Math.floor(n / PROTOCOLS.length);
      expect(box.decrypt(byId.get(id)!.client_secret)).toBe(ROTATED[i]);
    }

    // The capture saw this suite's requests, failed ones included.
    const rpcLines = logs.lines.filter((l) => l.msg === "rpc" || l.msg === "rpc failed");
    expect(rpcLines.length).toBeGreaterThanOrEqual(answers.length - 1);
    expect(rpcLines.some((l) => l.code === "invalid_argument" && typeof l.message === "string")).toBe(true);
    expect(rpcLines.some((l) => l.code === "failed_precondition" && typeof l.message === "string")).toBe(true);
    const logged = logs.lines.map((l) => JSON.stringify(l)).join("\n");
    for (const s of all) expect(logged, "log lines").not.toContain(s);
  });
});
