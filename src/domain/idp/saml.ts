import "reflect-metadata";
import { webcrypto } from "node:crypto";
import { cryptoProvider, X509CertificateGenerator } from "@peculiar/x509";
import { IdentityProvider } from "samlify";
import { invalidArgument } from "../errors.js";

/**
 * The rules of a SAML 2.0 provider's configuration (the protocol itself is
 * upstream-idps/saml.ts): what metadata is usable, and the SP key pair the service makes for
 * each provider. samlify (with its XML signature and schema checks) reads the metadata;
 * @peculiar/x509, which WebAuthn's attestation checks load already, makes the certificate.
 */

const NAME_ID_FORMATS: Record<string, string> = {
  SAML_NAME_ID_FORMAT_UNSPECIFIED: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
  SAML_NAME_ID_FORMAT_EMAIL_ADDRESS: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  SAML_NAME_ID_FORMAT_PERSISTENT: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
  SAML_NAME_ID_FORMAT_TRANSIENT: "urn:oasis:names:tc:SAML:2.0:nameid-format:transient",
};

/** A SAML provider's configuration as stored (proto3 JSON of SAMLConfig: defaults absent). */
export interface SamlConfig {
  metadataXml: string;
  binding?: "SAML_BINDING_UNSPECIFIED" | "SAML_BINDING_POST" | "SAML_BINDING_REDIRECT";
  withSignedRequest?: boolean;
  nameIdFormat?: string;
  transientMappingAttributeName?: string;
}

/** The SP's own key and certificate for one provider, sealed as other types' secrets are. */
export interface SpKeyPair {
  privateKey: string;
  certificate: string;
}

/** samlify's name of the request binding; UNSPECIFIED is HTTP-POST. */
export const requestBinding = (config: SamlConfig): "post" | "redirect" => (config.binding === "SAML_BINDING_REDIRECT" ? "redirect" : "post");

export const nameIdFormatOf = (config: SamlConfig): string => NAME_ID_FORMATS[config.nameIdFormat ?? ""] ?? NAME_ID_FORMATS.SAML_NAME_ID_FORMAT_UNSPECIFIED!;

const RSA = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };
/** The SP certificate's life: identity providers pin it from the metadata, so it should outlive the provider's use. */
const CERTIFICATE_YEARS = 20;

cryptoProvider.set(webcrypto as never);

/**
 * A new RSA-2048 key (RSA with SHA-256 is what every identity provider verifies) and a
 * self-signed certificate for it, the way SAML metadata carries a key.
 */
export async function newSpKeyPair(): Promise<string> {
  const keys = await webcrypto.subtle.generateKey(RSA, true, ["sign", "verify"]);
  const notBefore = new Date();
  const notAfter = new Date(notBefore);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + CERTIFICATE_YEARS);
  const certificate = await X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
      .toString("hex")
      .replace(/^[89a-f]/, "1"),
    name: "CN=platform identity SAML service provider",
    notBefore,
    notAfter,
    keys: keys as never,
    signingAlgorithm: RSA,
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  const privateKey = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`;
  const pair: SpKeyPair = { privateKey, certificate: certificate.toString("pem") };
  return JSON.stringify(pair);
}

/** The identity provider as its metadata describes it; InvalidArgument naming what is missing. */
export function identityProviderOf(config: SamlConfig) {
  let idp;
  try {
    idp = IdentityProvider({ metadata: config.metadataXml });
  } catch (error) {
    throw invalidArgument(`metadataXml is not SAML metadata: ${(error as Error).message.slice(0, 300)}`);
  }
  const meta = idp.entityMeta;
  if (!meta.getEntityID()) throw invalidArgument("metadataXml has no EntityDescriptor with an entityID");
  return idp;
}

/**
 * A configuration the login can use, refused when given rather than at the first sign-in:
 * the metadata names an entity, a single sign-on service for the chosen binding and a signing
 * certificate (an assertion is accepted only when signed by it); an identity provider that
 * wants signed requests gets them; the transient format names the attribute that identifies
 * the user for good.
 */
export function requireUsableSamlConfig(config: SamlConfig): void {
  const idp = identityProviderOf(config);
  const meta = idp.entityMeta;
  const binding = requestBinding(config);
  const sso = meta.getSingleSignOnService(binding);
  if (typeof sso !== "string" || !/^https?:\/\//.test(sso))
    throw invalidArgument(
      `metadataXml has no SingleSignOnService with the HTTP-${binding === "post" ? "POST" : "Redirect"} binding: choose the other binding or complete the metadata`,
    );
  const certificates = [meta.getX509Certificate("signing")].flat().filter(Boolean);
  if (certificates.length === 0)
    throw invalidArgument("metadataXml has no signing certificate (a KeyDescriptor with an X509Certificate): assertions could not be verified");
  if (meta.isWantAuthnRequestsSigned() && !config.withSignedRequest)
    throw invalidArgument("the identity provider's metadata says WantAuthnRequestsSigned: set withSignedRequest");
  if (config.nameIdFormat === "SAML_NAME_ID_FORMAT_TRANSIENT" && !config.transientMappingAttributeName)
    throw invalidArgument(
      "the transient NameID format changes at every sign-in: transientMappingAttributeName must name the attribute that identifies the user",
    );
}
