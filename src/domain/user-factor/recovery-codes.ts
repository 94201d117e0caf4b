import { createHmac, randomInt } from "node:crypto";
import type { SecretBox } from "../../crypto/encryption.js";

/**
 * Recovery codes: ten at a time, each twelve characters of the look-alike-free alphabet of the
 * other codes (about 55 bits), shown as three groups of four. Stored as an HMAC under a key
 * derived from the master key, as the other short codes are (domain/notification/codes.ts): a copy
 * of the table alone cannot be searched for them.
 */

const RECOVERY_CODE_COUNT = 10;
const ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679";
const LENGTH = 12;

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let code = "";
    for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
    return code.match(/.{4}/g)!.join("-");
  });
}

/** Spaces, dashes and case do not matter to a person copying a code. */
export function recoveryCodeHash(box: SecretBox, instanceId: string, userId: string, code: string): string {
  const normalized = code.slice(0, 64).replace(/[\s-]/g, "").toUpperCase();
  return createHmac("sha256", box.derive("recovery-codes")).update(`${instanceId}\n${userId}\n${normalized}`).digest("base64url");
}
