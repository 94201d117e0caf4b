import { createPrivateKey } from "node:crypto";
import { invalidArgument } from "../errors.js";
import { requireUsableSamlConfig, type SamlConfig } from "./saml.js";

const PKCS8_PEM = /^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----\r?\n?$/;

/**
 * A secret the type can use, refused when given rather than at the first login. Apple's key
 * signs ES256 client secrets: only the PKCS#8 PEM of a P-256 key, as Apple's .p8 files are,
 * is one (a SEC1 "EC PRIVATE KEY" of the same curve would work too, but Apple never issues
 * one, so it is more likely a key meant for something else).
 */
export function requireUsableSecret(type: string, secret: string): void {
  if (type !== "apple") return;
  const pem = secret.trim() + "\n";
  const refused = () =>
    invalidArgument("privateKey must be the PKCS#8 PEM of an EC P-256 key, as Apple issues it (a .p8 file starting with -----BEGIN PRIVATE KEY-----)");
  if (!PKCS8_PEM.test(pem)) throw refused();
  let key;
  try {
    key = createPrivateKey({ key: pem, format: "pem" });
  } catch {
    throw refused();
  }
  if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") throw refused();
}

/** A configuration the type can use (as its proto's validation cannot tell), refused when given. */
export function requireUsableConfig(type: string, config: Record<string, unknown>): void {
  if (type === "saml") requireUsableSamlConfig(config as unknown as SamlConfig);
}
