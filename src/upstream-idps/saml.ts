import { createHash } from "node:crypto";
import { Constants, ServiceProvider, setSchemaValidator } from "samlify";
import type { SecretBox } from "../crypto/encryption.js";
import { identityProviderOf, nameIdFormatOf, requestBinding, type SamlConfig, type SpKeyPair } from "../domain/idp/saml.js";
import type { ExternalUser, StoredIdp } from "./clients.js";
import { UpstreamError } from "./fetch.js";
import { validateSamlXml } from "./saml-schema.js";

/**
 * The service as a SAML 2.0 service provider of one identity provider (docs/oidc.md, "SAML"):
 * its SP metadata, the authentication request, and the response's checks. samlify does the
 * XML work (parsing without entities, XML signatures against the metadata's certificate, the
 * extraction from the signed node only, which defeats signature wrapping) and the checks:
 * status, issuer, audience, recipient and destination, InResponseTo against the request this
 * browser's flow sent, the time window with PLATFORM_SAML_CLOCK_SKEW, and replay through the
 * store the caller gives. Every message is also validated against the SAML XML schemas first
 * (saml-schema.ts).
 */

setSchemaValidator({ validate: validateSamlXml });

/** Where a provider's SP lives under an issuer: its entity ID is its metadata's URL, as most identity providers expect. */
export const samlPaths = (idpId: string) => ({ metadata: `/idps/${idpId}/saml/metadata`, acs: `/idps/${idpId}/saml/acs` });

/** `/idps/<id>/saml/<metadata|acs>`: the provider's id and which. */
export const SAML_PATH = /^\/idps\/([^/]{1,200})\/saml\/(metadata|acs)$/;

export interface SamlSettings {
  /** PLATFORM_SAML_CLOCK_SKEW. */
  clockSkewMs: number;
}

/** Remembers a key until it expires; false when it is remembered already (of two concurrent calls, one wins). */
export type RememberOnce = (key: string, expiresAt: Date) => Promise<boolean>;

export interface SamlParties {
  sp: ReturnType<typeof ServiceProvider>;
  idp: ReturnType<typeof identityProviderOf>;
  config: SamlConfig;
}

/**
 * The two parties of one provider, for one issuer (the request's host: the SP's entity ID
 * and assertion consumer service are under it). `remember` keeps assertion IDs until they
 * expire; without it (metadata, a request) no assertion is read.
 */
export function samlParties(stored: StoredIdp, box: SecretBox, issuer: string, settings: SamlSettings, remember?: RememberOnce): SamlParties {
  const config = stored.config as unknown as SamlConfig;
  const keys = JSON.parse(box.decrypt(stored.client_secret)) as SpKeyPair;
  let idp;
  try {
    idp = identityProviderOf(config);
  } catch (error) {
    throw new UpstreamError("invalid", `the provider's metadata cannot be used: ${(error as Error).message}`);
  }
  // Whether requests are signed is the provider's setting (withSignedRequest, which its
  // creation requires where the metadata wants them); samlify would have both sides agree.
  (idp.entityMeta as unknown as { meta: Record<string, unknown> }).meta.wantAuthnRequestsSigned = String(Boolean(config.withSignedRequest));
  const paths = samlPaths(stored.id);
  const sp = ServiceProvider({
    entityID: issuer + paths.metadata,
    privateKey: keys.privateKey,
    signingCert: keys.certificate,
    authnRequestsSigned: Boolean(config.withSignedRequest),
    wantAssertionsSigned: true,
    assertionConsumerService: [{ Binding: Constants.namespace.binding.post, Location: issuer + paths.acs }],
    nameIDFormat: [nameIdFormatOf(config)],
    allowUnsolicitedResponse: false,
    wantAudienceCheck: true,
    clockDrifts: [-settings.clockSkewMs, settings.clockSkewMs],
    ...(remember && {
      replayCache: {
        // Per provider: two identity providers may use the same assertion IDs.
        saveIfAbsent: (key: string, expiresAt: Date) => remember(createHash("sha256").update(`${stored.id} ${key}`).digest("base64url"), expiresAt),
      },
    }),
  });
  return { sp, idp, config };
}

/** The SP metadata an identity provider is configured with: entity ID, ACS, NameID format, signing certificate. */
export function spMetadata(parties: SamlParties): string {
  return parties.sp.getMetadata();
}

/** An authentication request: a URL to redirect to, or a form to post. `id` is what the response must answer. */
export type SamlRequest = { id: string; redirect: string } | { id: string; post: { url: string; fields: Record<string, string> } };

export function samlRequest(parties: SamlParties, relayState: string): SamlRequest {
  const binding = requestBinding(parties.config);
  let made;
  try {
    made = parties.sp.createLoginRequest(parties.idp, binding, { relayState }) as { id: string; context: string; entityEndpoint?: string };
  } catch (error) {
    throw new UpstreamError("invalid", `no authentication request could be made: ${(error as Error).message}`);
  }
  if (binding === "redirect") return { id: made.id, redirect: made.context };
  return { id: made.id, post: { url: made.entityEndpoint!, fields: { SAMLRequest: made.context, RelayState: relayState } } };
}

/** What a checked response said of the person. */
export interface SamlSignIn {
  user: ExternalUser;
  raw: Record<string, unknown>;
}

interface Extracted {
  nameID?: string;
  issuer?: string;
  attributes?: Record<string, string | string[]>;
  sessionIndex?: { sessionIndex?: string };
}

/**
 * Reads the identity provider's response to request `requestId`: every check of samlify's
 * (above) must pass, or it is an UpstreamError whose message names the one that failed.
 */
export async function readSamlResponse(parties: SamlParties, samlResponse: string, requestId: string): Promise<SamlSignIn> {
  let extracted: Extracted;
  try {
    const result = await parties.sp.parseLoginResponse(parties.idp, "post", { body: { SAMLResponse: samlResponse } } as never, { inResponseTo: requestId });
    extracted = result.extract as Extracted;
  } catch (error) {
    throw new UpstreamError("invalid", `the SAML response was refused: ${refusal(error)}`);
  }
  return signInOf(parties.config, extracted);
}

/** samlify's reasons are codes (ERR_REPLAYED_ASSERTION, FAILED_TO_VERIFY_SIGNATURE, …) or schema messages: kept short for the log. */
function refusal(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, 300);
}

/** Common names of the attributes a person's profile is read from: LDAP's, their OIDs, Microsoft's claim URIs, and plain words. */
const ATTRIBUTES = {
  email: ["email", "mail", "emailaddress", "urn:oid:0.9.2342.19200300.100.1.3", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"],
  givenName: ["givenname", "firstname", "given_name", "urn:oid:2.5.4.42", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname"],
  familyName: ["sn", "surname", "lastname", "family_name", "urn:oid:2.5.4.4", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname"],
  displayName: ["displayname", "name", "urn:oid:2.16.840.1.113730.3.1.241", "http://schemas.microsoft.com/identity/claims/displayname"],
  username: ["username", "uid", "urn:oid:0.9.2342.19200300.100.1.1", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn"],
  preferredLanguage: ["preferredlanguage", "urn:oid:2.16.840.1.113730.3.1.39"],
} as const;

function signInOf(config: SamlConfig, extracted: Extracted): SamlSignIn {
  const attributes = new Map<string, string>();
  for (const [name, value] of Object.entries(extracted.attributes ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === "string") attributes.set(name.toLowerCase(), first.trim().slice(0, 200));
  }
  const attribute = (names: readonly string[]) => names.map((name) => attributes.get(name)).find((value) => value) ?? "";
  const nameId = (extracted.nameID ?? "").trim();
  const transient = config.nameIdFormat === "SAML_NAME_ID_FORMAT_TRANSIENT";
  const id = transient ? attributes.get(config.transientMappingAttributeName!.toLowerCase()) : nameId;
  if (!id)
    throw new UpstreamError(
      "invalid",
      transient ? `the assertion has no ${config.transientMappingAttributeName} attribute` : "the assertion names no subject (NameID)",
    );
  const email = attribute(ATTRIBUTES.email) || (config.nameIdFormat === "SAML_NAME_ID_FORMAT_EMAIL_ADDRESS" || /^[^@\s]+@[^@\s]+$/.test(nameId) ? nameId : "");
  const givenName = attribute(ATTRIBUTES.givenName);
  const familyName = attribute(ATTRIBUTES.familyName);
  const user: ExternalUser = {
    id: id.slice(0, 200),
    username: attribute(ATTRIBUTES.username) || email,
    email,
    // An assertion says who the person is, not that the address was ever verified.
    emailVerified: false,
    givenName,
    familyName,
    displayName: attribute(ATTRIBUTES.displayName) || `${givenName} ${familyName}`.trim(),
    preferredLanguage: attribute(ATTRIBUTES.preferredLanguage).toLowerCase().split(/[-_]/)[0] ?? "",
  };
  const raw = { issuer: extracted.issuer, nameId, attributes: extracted.attributes ?? {}, sessionIndex: extracted.sessionIndex?.sessionIndex };
  return { user, raw };
}
