import type { KoaContextWithOIDC } from "oidc-provider";

/** The one resource indicator of this service: formats and audiences are decided per client. */
export const PLATFORM_RESOURCE = "urn:platform:resource";

export interface AccessTokenRequest {
  accountId: string;
  scopes: readonly string[];
  aud: string[];
  format: "jwt" | "opaque";
  gty: string;
  /** The grant a refresh token issued with it belongs to (token exchange with offline_access). */
  grantId?: string;
  /** RFC 8693 section 4.1: who acts for the user, when the token comes from an impersonation. */
  act?: Record<string, unknown>;
}

/**
 * Issues an access token through the provider's own model, so that it is stored (opaque) or
 * signed with the instance's current key (JWT) exactly as the provider's grants do; the JWT
 * customizer (configuration.ts) records JWTs by jti and sets their audience list.
 */
export async function issueAccessToken(ctx: KoaContextWithOIDC, request: AccessTokenRequest) {
  const { provider, client } = ctx.oidc;
  const token = new provider.AccessToken({
    accountId: request.accountId,
    client: client!,
    gty: request.gty,
    scope: request.scopes.join(" ") || undefined,
    ...(request.grantId && { grantId: request.grantId }),
    // extraTokenClaims (token-claims.ts) carries it into the stored payload or the JWT.
    ...(request.act && { extra: { act: request.act } }),
  } as ConstructorParameters<typeof provider.AccessToken>[0]);
  if (request.format === "jwt") {
    token.resourceServer = new provider.ResourceServer(PLATFORM_RESOURCE, {
      accessTokenFormat: "jwt",
      audience: client!.clientId,
      scope: request.scopes.join(" "),
    });
  }
  // The provider holds one audience per token; ours lists the client and the projects asked for.
  token.aud = request.aud;
  ctx.oidc.entity("AccessToken", token);
  const value = await token.save();
  return { value, expiresIn: token.expiration, token };
}
