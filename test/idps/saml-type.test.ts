import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretBox } from "../../src/crypto/encryption.js";
import { PlatformIDPIntents } from "../../gen/platform/resources/idp_intent/v3alpha/idp_intent_service_pb.js";
import { PROTOCOLS, protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage } from "../support/results.js";
import { startSamlIdp, type SamlIdp } from "../support/saml-idp.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ACTIVE, INHERIT, idpClient, instanceOwner, type Idps } from "./helpers.js";

/*
 * The SAML 2.0 provider type through the API (issue 38): created, read, patched and deleted
 * over every protocol; metadata that cannot be used is refused when given; the SP key pair
 * the service makes is sealed and never answered; the SP metadata it publishes per provider.
 */

const MASTER_KEY = "0123456789abcdef0123456789abcdef";

describe.each(DATABASE_KINDS)("SAML identity providers through the API (%s)", (kind) => {
  let server: TestServer;
  let idps: Idps;
  let upstream: SamlIdp;
  beforeAll(async () => {
    [server, upstream] = await Promise.all([startTestServer(kind), startSamlIdp()]);
    idps = idpClient(server.baseUrl, server.adminToken);
  });
  afterAll(() => Promise.all([server?.close(), upstream?.close()]));

  const config = (extra: JsonObject = {}): JsonObject => ({ metadataXml: upstream.metadataXml(), binding: "SAML_BINDING_REDIRECT", ...extra });

  it.each(PROTOCOLS)("creates, reads, patches and deletes over %s, never answering the SP key", async (protocol) => {
    const api = idpClient(server.baseUrl, server.adminToken, protocol);
    const made = await api.call("CreateSAMLIDP", { idp: { idp: { name: `SAML ${protocol}`, options: { isAutoCreation: true } }, config: config() } });
    expect(made).toMatchObject({ ok: true });
    if (protocol === "rest") expect(made.httpStatus).toBe(201);
    const id = okMessage(made).details.id as string;
    const got = await api.call("GetSAMLIDP", { id });
    expect(okMessage(got)).toEqual({
      idp: {
        details: { id, sequence: "1", changeDate: expect.any(String), resourceOwner: instanceOwner(server.instanceId) },
        state: ACTIVE,
        type: "PROVIDER_TYPE_SAML",
        idp: { idp: { name: `SAML ${protocol}`, statePolicy: INHERIT, options: { isAutoCreation: true } }, config: config() },
      },
    });
    expect(await api.call("GetLDAPIDP", { id })).toMatchObject({ ok: false, code: Code.NotFound });
    const patched = await api.call("PatchSAMLIDP", {
      id,
      idp: { config: { binding: "SAML_BINDING_POST", withSignedRequest: true, nameIdFormat: "SAML_NAME_ID_FORMAT_PERSISTENT" } },
    });
    expect(okMessage(patched).details.sequence).toBe("2");
    expect(okMessage(await api.call("GetSAMLIDP", { id })).idp.idp.config).toEqual({
      metadataXml: upstream.metadataXml(),
      binding: "SAML_BINDING_POST",
      withSignedRequest: true,
      nameIdFormat: "SAML_NAME_ID_FORMAT_PERSISTENT",
    });
    const row = await server.service.store.db.selectFrom("idps").select("client_secret").where("id", "=", id).executeTakeFirstOrThrow();
    const pair = JSON.parse(new SecretBox(MASTER_KEY).decrypt(row.client_secret)) as { privateKey: string; certificate: string };
    expect(pair.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(row.client_secret).not.toContain("PRIVATE KEY");
    for (const answer of [made, got, patched]) expect(JSON.stringify(answer)).not.toContain("PRIVATE KEY");
    expect(okMessage(await api.call("DeleteIDP", { id })).details.sequence).toBe("3");
  });

  it("refuses metadata it could not use, saying why", async () => {
    const refused = async (cfg: JsonObject, message: RegExp) => {
      const answer = await idps.call("CreateSAMLIDP", { idp: { idp: { name: "SAML bad" }, config: cfg } });
      expect(answer, JSON.stringify(cfg).slice(0, 200)).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect((answer as { message: string }).message).toMatch(message);
    };
    await refused({ metadataXml: "<not-xml" }, /metadataXml is not SAML metadata/);
    await refused({ metadataXml: "<EntityDescriptor xmlns='urn:oasis:names:tc:SAML:2.0:metadata'/>" }, /metadataXml/);
    await refused(
      { metadataXml: upstream.metadataXml({ bindings: ["post"] }), binding: "SAML_BINDING_REDIRECT" },
      /no SingleSignOnService with the HTTP-Redirect binding/,
    );
    const unsigned = upstream.metadataXml().replace(/<KeyDescriptor[\s\S]*?<\/KeyDescriptor>/g, "");
    await refused({ metadataXml: unsigned }, /no signing certificate/);
    await refused({ metadataXml: upstream.metadataXml({ wantSignedRequests: true }) }, /WantAuthnRequestsSigned: set withSignedRequest/);
    await refused({ metadataXml: upstream.metadataXml(), nameIdFormat: "SAML_NAME_ID_FORMAT_TRANSIENT" }, /transientMappingAttributeName/);
    await refused({ metadataXml: "x".repeat(262_145) }, /metadata_xml|metadataXml/);
    // A patch is checked the same way, and changes nothing when refused.
    const id = (await idps.ok("CreateSAMLIDP", { idp: { idp: { name: "SAML patched" }, config: config() } })).details.id as string;
    const patch = await idps.call("PatchSAMLIDP", { id, idp: { config: { metadataXml: unsigned } } });
    expect(patch).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect((await idps.ok("GetSAMLIDP", { id })).idp.idp.config.metadataXml).toBe(upstream.metadataXml());
  });

  it("publishes each provider's SP metadata: its entity ID, ACS, NameID format and certificate", async () => {
    const id = (
      await idps.ok("CreateSAMLIDP", {
        idp: { idp: { name: "SAML meta" }, config: config({ withSignedRequest: true, nameIdFormat: "SAML_NAME_ID_FORMAT_EMAIL_ADDRESS" }) },
      })
    ).details.id as string;
    const res = await fetch(`${server.baseUrl}/idps/${id}/saml/metadata`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/samlmetadata+xml; charset=utf-8");
    const xml = await res.text();
    expect(xml).toContain(`entityID="${server.baseUrl}/idps/${id}/saml/metadata"`);
    expect(xml).toContain(`Location="${server.baseUrl}/idps/${id}/saml/acs"`);
    expect(xml).toContain('Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"');
    expect(xml).toContain('AuthnRequestsSigned="true"');
    expect(xml).toContain('WantAssertionsSigned="true"');
    expect(xml).toContain("<NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</NameIDFormat>");
    const row = await server.service.store.db.selectFrom("idps").select("client_secret").where("id", "=", id).executeTakeFirstOrThrow();
    const { certificate } = JSON.parse(new SecretBox(MASTER_KEY).decrypt(row.client_secret)) as { certificate: string };
    expect(xml.replace(/\s/g, "")).toContain(certificate.replace(/-----[A-Z ]+-----|\s/g, ""));
    expect(xml).not.toContain("PRIVATE");
    // Another provider has another key.
    const other = (await idps.ok("CreateSAMLIDP", { idp: { idp: { name: "SAML meta 2" }, config: config() } })).details.id as string;
    const otherXml = await (await fetch(`${server.baseUrl}/idps/${other}/saml/metadata`)).text();
    expect(otherXml.match(/<ds:X509Certificate>([^<]+)</)?.[1]).not.toBe(xml.match(/<ds:X509Certificate>([^<]+)</)?.[1]);
    // Not a SAML provider, no provider, another method.
    const gitlab = (
      await idps.ok("CreateGitLabIDP", { idp: { idp: { name: "GitLab meta" }, config: { clientId: "c", clientSecret: "s", scopes: ["openid"] } } })
    ).details.id as string;
    expect((await fetch(`${server.baseUrl}/idps/${gitlab}/saml/metadata`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/idps/nope/saml/metadata`)).status).toBe(404);
    const post = await fetch(`${server.baseUrl}/idps/${id}/saml/metadata`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
    expect((await fetch(`${server.baseUrl}/idps/${id}/saml/acs`)).status).toBe(405);
  });

  it("refuses an API intent with a SAML provider: intents are OAuth's redirect-and-code flow", async () => {
    const id = (await idps.ok("CreateSAMLIDP", { idp: { idp: { name: "SAML intent" }, config: config() } })).details.id as string;
    const intent = await protocolClient(PlatformIDPIntents, "grpc", server.baseUrl).call(
      "StartIDPIntent",
      { idpId: id, successUrl: "https://ui.example/ok", failureUrl: "https://ui.example/failed" },
      server.adminToken,
    );
    expect(intent).toMatchObject({ ok: false, code: Code.FailedPrecondition });
  });

  it("keeps its providers to its instance: another instance's host finds neither the provider nor its metadata", async () => {
    const id = (await idps.ok("CreateSAMLIDP", { idp: { idp: { name: "SAML mine" }, config: config() } })).details.id as string;
    const other = await server.createInstance("127.0.0.1");
    const foreign = idpClient(other.baseUrl, other.adminToken);
    expect(await foreign.call("GetSAMLIDP", { id })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await foreign.call("PatchSAMLIDP", { id, idp: { idp: { name: "taken" } } })).toMatchObject({ ok: false, code: Code.NotFound });
    expect((await fetch(`${other.baseUrl}/idps/${id}/saml/metadata`)).status).toBe(404);
  });
});
