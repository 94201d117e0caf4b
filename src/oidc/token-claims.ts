import type { KoaContextWithOIDC } from "oidc-provider";
import type { Db } from "../store/eventstore.js";
import { activeAccount, claimsOf } from "./accounts.js";
import { PLATFORM_RESOURCE } from "./issue.js";
import type { OidcAdapter } from "./payload-adapter.js";
import { roleClaims, ROLES_CLAIM } from "./roles.js";
import { audienceAndScope, isKnownScope, requestedProjects, splitScope } from "./scopes.js";
import { AUDIENCE_EXTRA, jwtRecord } from "./tokens.js";

type ClientLike = { clientId: string; [key: string]: unknown };
type TokenLike = { clientId?: string; client?: ClientLike; scope?: string; aud?: string | string[]; accountId?: string; kind?: string };

/**
 * Claims every access token carries beside the provider's: the audience list (the client,
 * its project, the projects its scopes name, `platform`), and the user's roles when the
 * application asserts them in access tokens.
 */
export function extraTokenClaims(db: () => Db, instanceId: string) {
  return async (_ctx: KoaContextWithOIDC, token: TokenLike): Promise<Record<string, unknown> | undefined> => {
    if (token.kind !== "AccessToken") return undefined;
    const client = token.client;
    const scopes = splitScope(token.scope);
    const projectId = client?.["platform_project_id"] as string | undefined;
    const aud = Array.isArray(token.aud) ? token.aud : (await audienceAndScope(db(), instanceId, { clientId: token.clientId!, ...(projectId && { projectId }) }, scopes)).aud;
    const roles =
      client?.["platform_access_token_role_assertion"] && token.accountId
        ? await roleClaims(db(), instanceId, token.accountId, [...(projectId ? [projectId] : []), ...requestedProjects(scopes)], scopes)
        : {};
    return { [AUDIENCE_EXTRA]: aud, ...roles };
  };
}

/**
 * The JWT access token gets the audience list as `aud`, and is recorded by jti (it is not
 * stored by the provider) so that it can be revoked and introspected.
 */
export function jwtCustomizer(jwtRecords: OidcAdapter) {
  return async (_ctx: unknown, token: unknown, jwt: { payload: Record<string, unknown> }) => {
    const payload = jwt.payload;
    const aud = payload[AUDIENCE_EXTRA] ?? (token as TokenLike).aud;
    delete payload[AUDIENCE_EXTRA];
    if (aud !== undefined) payload.aud = aud;
    const record = jwtRecord(payload, token as never);
    await jwtRecords.upsert(String(payload.jti), record, Math.max(1, Number(payload.exp) - Math.floor(Date.now() / 1000)));
  };
}

/**
 * The scopes the one resource of this service may carry for a request: everything known
 * that the request, its grant, code or refresh token asked for.
 */
export function resourceScope(ctx: KoaContextWithOIDC): string {
  const entities = ctx.oidc.entities as { Grant?: { resources?: Record<string, string> }; RefreshToken?: { scope?: string }; AuthorizationCode?: { scope?: string } };
  const asked = [
    ctx.oidc.params?.scope as string | undefined,
    entities.Grant?.resources?.[PLATFORM_RESOURCE],
    entities.RefreshToken?.scope,
    entities.AuthorizationCode?.scope,
  ].join(" ");
  return splitScope(asked).filter(isKnownScope).join(" ");
}

/**
 * The provider's account: claims by scope, and the spec's rule that an ID token issued
 * together with an access token carries no profile, email, phone or address claims unless
 * the application sets `id_token_userinfo_assertion`; roles when it sets
 * `id_token_role_assertion`.
 */
export function findAccount(db: () => Db, instanceId: string) {
  return async (ctx: KoaContextWithOIDC, sub: string) => {
    const account = await activeAccount(db(), instanceId, sub);
    if (!account) return undefined;
    return {
      accountId: sub,
      async claims(use: string, scope: string) {
        const scopes = splitScope(scope);
        const client = ctx.oidc.client as ClientLike | undefined;
        const withAccessToken = ctx.oidc.route !== "authorization" && ctx.oidc.route !== "resume" ? true : String(ctx.oidc.params?.response_type ?? "").split(" ").includes("token");
        const userinfoInIdToken = use !== "id_token" || !withAccessToken || Boolean(client?.["platform_id_token_userinfo_assertion"]);
        const claims = userinfoInIdToken ? claimsOf(account, new Set(scopes)) : { sub };
        if (use === "id_token" && client?.["platform_id_token_role_assertion"]) {
          const projectId = client["platform_project_id"] as string | undefined;
          const roles = await roleClaims(db(), instanceId, sub, [...(projectId ? [projectId] : []), ...requestedProjects(scopes)], scopes);
          if (roles[ROLES_CLAIM]) Object.assign(claims, { [ROLES_CLAIM]: roles[ROLES_CLAIM] });
        }
        return claims as { sub: string };
      },
    };
  };
}
