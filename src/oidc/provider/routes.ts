/** The spec's paths of the OpenID Connect and OAuth 2.0 endpoints (section 4). */
export const OIDC_ROUTES = {
  authorization: "/oauth/v2/authorize",
  token: "/oauth/v2/token",
  introspection: "/oauth/v2/introspect",
  revocation: "/oauth/v2/revoke",
  userinfo: "/oidc/v1/userinfo",
  end_session: "/oidc/v1/end_session",
  jwks: "/oauth/v2/keys",
} as const;

export const DISCOVERY_PATH = "/.well-known/openid-configuration";
