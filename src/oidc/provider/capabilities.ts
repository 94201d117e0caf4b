import { ROLES_CLAIM } from "../helpers/roles.js";

// What the provider offers, as discovery lists it and the endpoints enforce it.

/** Client authentication methods, as the spec allows them per endpoint (section 4). */
export const CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"] as const;

const ORG_CLAIMS = ["urn:platform:iam:user:resourceowner:id", "urn:platform:iam:user:resourceowner:name", "urn:platform:iam:user:resourceowner:primary_domain"];

/**
 * The claims each scope releases (OpenID Connect Core 1.0, section 5.4, and ours). With
 * `openid`, in ID tokens: how the user signed in (`amr`: `pwd`, `fed`, …) and how strongly
 * (`acr`, acr.ts), and the actor of an impersonation (`act`, RFC 8693), when the token has them.
 */
export const CLAIMS = {
  openid: ["sub", "amr", "acr", "act", ROLES_CLAIM],
  profile: ["name", "given_name", "family_name", "nickname", "locale", "gender", "preferred_username", "updated_at", ...ORG_CLAIMS],
  email: ["email", "email_verified"],
  phone: ["phone_number", "phone_number_verified"],
  address: ["address"],
};

/** Algorithms a client or machine user may sign its assertions with (RFC 7523). */
export const ASSERTION_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"];

/** An assertion may not be valid for longer than this: it is a one-off proof, not a credential. */
export const MAX_ASSERTION_LIFETIME_S = 3600;

/** Clocks of callers may be this far off. */
export const ASSERTION_CLOCK_TOLERANCE_S = 5;
