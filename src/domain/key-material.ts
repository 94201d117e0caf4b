import { createPublicKey, generateKeyPair, type KeyObject } from "node:crypto";
import { promisify } from "node:util";
import { invalidArgument } from "./errors.js";

const generate = promisify(generateKeyPair);

export type KeySource = { generate: "rsa" | "ec" } | { publicKey: string };

export interface KeyMaterial {
  type: "rsa" | "ec";
  publicKey: string;
  /** PKCS #8 PEM of a generated pair; never stored. */
  privateKey?: string;
}

/**
 * A generated pair (RSA 2048 for RS256, P-256 for ES256) or a registered public key, which
 * must be RSA of at least 2048 bits or EC on P-256, P-384 or P-521. Key generation is slow
 * (RSA: tens of milliseconds) and runs before the transaction.
 */
export async function keyMaterial(source: KeySource): Promise<KeyMaterial> {
  if ("generate" in source) {
    const pair = source.generate === "rsa" ? await generate("rsa", { modulusLength: 2048 }) : await generate("ec", { namedCurve: "P-256" });
    return { type: source.generate, publicKey: pem(pair.publicKey), privateKey: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
  }
  // createPublicKey would also take a private key and derive its public half: refuse one
  // being sent where only the public key belongs.
  if (/-----BEGIN ([A-Z0-9 ]+)-----/.exec(source.publicKey)?.[1] !== "PUBLIC KEY") {
    throw invalidArgument("publicKey must be a PEM public key in SPKI form (-----BEGIN PUBLIC KEY-----)");
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: source.publicKey, format: "pem" });
  } catch {
    throw invalidArgument("publicKey is not a PEM public key");
  }
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === "rsa" && (details.modulusLength ?? 0) >= 2048) return { type: "rsa", publicKey: pem(key) };
  if (key.asymmetricKeyType === "ec" && ["prime256v1", "secp384r1", "secp521r1"].includes(details.namedCurve ?? "")) return { type: "ec", publicKey: pem(key) };
  throw invalidArgument("publicKey must be an RSA key of at least 2048 bits or an EC key on P-256, P-384 or P-521");
}

function pem(key: KeyObject): string {
  return key.export({ type: "spki", format: "pem" }).toString();
}
