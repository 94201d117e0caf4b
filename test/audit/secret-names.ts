/**
 * Property names that hold a secret, or may: passwords, client secrets, tokens, codes,
 * hashes, private keys, TOTP secrets, recovery codes, sealed values, WebAuthn credentials.
 * The audit log shows none (src/domain/audit/shown-payloads.ts).
 */
const SECRET_NAME = /secret|hash|code|password|token|private|otp|salt|encrypted|ciphertext|credential|recovery/i;

/** Names the pattern catches that were looked at and hold no secret. */
const VETTED = new Set([
  // Flags that a secret exists or changed: booleans, never the secret.
  "hasPassword",
  "secretSet",
  "secretChanged",
  "clientSecretChanged",
  // OAuth and OpenID Connect vocabulary: kinds of tokens and where to get them, not tokens.
  "accessTokenType",
  "access_token_type",
  "accessTokenRoleAssertion",
  "idTokenRoleAssertion",
  "idTokenUserinfoAssertion",
  "isIdTokenMapping",
  "tokenEndpoint",
  // Rules and settings about passwords and tokens: a policy, lifetimes, switches, a threshold.
  "passwordPolicy",
  "password_check_lifetime",
  "allow_username_password",
  "max_password_attempts",
  "passwordless_type",
  "token_exchange",
]);

export function namesSecret(name: string): boolean {
  return SECRET_NAME.test(name) && !VETTED.has(name);
}
