/** Where records of JWT access tokens live (tokens.ts): by jti, so that they can be revoked and introspected. */
export const JWT_RECORD_MODEL = "AccessTokenRecord";

/** The models whose rows keep an access token valid: what a cached principal stands on (ended-tokens.ts). */
export const ACCESS_TOKEN_MODELS = ["AccessToken", JWT_RECORD_MODEL];
