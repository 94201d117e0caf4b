import { errors, type KoaContextWithOIDC, type Provider } from "oidc-provider";
import { FunctionError, type ActionFunctions } from "../../engines/actions/functions.js";
import type { Db } from "../../store/db.js";
import { outlivedByPassword, passwordChangedAt } from "../../domain/user/passwords.js";
import { activeAccount } from "../../domain/user/accounts.js";
import { claimsOf } from "../models/accounts.js";
import { exchangeOf } from "./exchange-grants.js";
import { PLATFORM_RESOURCE } from "./issue.js";
import type { OidcLookups } from "./lookups.js";
import type { OidcAdapter } from "../adapters/payload-adapter.js";
import { roleClaims, ROLES_CLAIM } from "./roles.js";
import { chainOf } from "../adapters/token-chains.js";
import { audienceAndScope, isKnownScope, requestedProjects, splitScope } from "./scopes.js";
import { AUDIENCE_EXTRA, CHAIN_EXTRA, jwtRecord } from "./tokens.js";

type ClientLike = { clientId: string; [key: string]: unknown };
type TokenLike = {
  clientId?: string;
  client?: ClientLike;
  scope?: string;
  aud?: string | string[];
  accountId?: string;
  kind?: string;
  gty?: string;
  grantId?: string;
  extra?: Record<string, unknown>;
};

/**
 * Claims every access token carries beside the provider's: the audience list (the client,
 * its project, the projects its scopes name, `platform`), the user's roles when the
 * application asserts them in access tokens, and its refresh-token chain (token-chains.ts,
 * kept with the token, never in a JWT).
 */
export function extraTokenClaims(db: () => Db, instanceId: string, lookups?: OidcLookups) {
  return async (ctx: KoaContextWithOIDC, token: TokenLike): Promise<Record<string, unknown> | undefined> => {
    if (token.kind !== "AccessToken") return undefined;
    const client = token.client;
    const scopes = splitScope(token.scope);
    const projectId = client?.["platform_project_id"] as string | undefined;
    // An exchanged token keeps its actor and its audience, refreshed ones too (exchange-grants.ts).
    const exchange = await exchangeOf(db, instanceId, token);
    const given = exchange.aud ?? (Array.isArray(token.aud) ? token.aud : undefined);
    const aud = given ?? (await audienceAndScope(db(), instanceId, { clientId: token.clientId!, ...(projectId && { projectId }) }, scopes, lookups)).aud;
    const roles =
      client?.["platform_access_token_role_assertion"] && token.accountId
        ? await roleClaims(db(), instanceId, token.accountId, [...(projectId ? [projectId] : []), ...requestedProjects(scopes)], scopes)
        : {};
    const chain = chainOf(ctx);
    return { [AUDIENCE_EXTRA]: aud, ...roles, ...(exchange.act && { act: exchange.act }), ...(chain && { [CHAIN_EXTRA]: chain }) };
  };
}

/**
 * The JWT access token gets the audience list as `aud` and what `function/preaccesstoken`
 * adds, and is recorded by jti (it is not stored by the provider), with its refresh-token
 * chain, so that it can be revoked and introspected.
 */
export function jwtCustomizer(jwtRecords: OidcAdapter, db: () => Db, instanceId: string, functions?: ActionFunctions) {
  return async (_ctx: unknown, token: unknown, jwt: { payload: Record<string, unknown> }) => {
    const payload = jwt.payload;
    const aud = payload[AUDIENCE_EXTRA] ?? (token as TokenLike).aud;
    delete payload[AUDIENCE_EXTRA];
    delete payload[CHAIN_EXTRA];
    if (aud !== undefined) payload.aud = aud;
    const accountId = (token as TokenLike).accountId;
    if (functions && accountId) {
      // preaccesstoken: before the JWT is signed; functions add claims, never replace one.
      Object.assign(payload, await asOidcError(functions.run(db(), instanceId, "preaccesstoken", () => activeAccount(db(), instanceId, accountId), payload)));
    }
    const record = jwtRecord(payload, token as never);
    await jwtRecords.upsert(String(payload.jti), record, Math.max(1, Number(payload.exp) - Math.floor(Date.now() / 1000)));
  };
}

/**
 * The scopes the one resource of this service may carry for a request: everything known
 * that the request, its grant, code or refresh token asked for.
 */
export function resourceScope(ctx: KoaContextWithOIDC): string {
  const entities = ctx.oidc.entities as {
    Grant?: { resources?: Record<string, string> };
    RefreshToken?: { scope?: string };
    AuthorizationCode?: { scope?: string };
  };
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
 * `id_token_role_assertion`; the actor when the refresh grant serves an impersonation's
 * refresh token (token exchange issues its first ID token itself, with `act`).
 */
export function findAccount(db: () => Db, instanceId: string) {
  return async (ctx: KoaContextWithOIDC, sub: string, source?: object) => {
    const token = source as { amr?: string[]; authTime?: number } | undefined;
    const account = await activeAccount(db(), instanceId, sub);
    if (!account) return undefined;
    // A code or refresh token of a sign-in the password proved ends when the password changes (invalid_grant).
    if (token?.amr?.includes("pwd") && outlivedByPassword(token.amr, token.authTime, await passwordChangedAt(db(), instanceId, sub))) return undefined;
    return {
      accountId: sub,
      async claims(use: string, scope: string) {
        const scopes = splitScope(scope);
        const client = ctx.oidc.client as ClientLike | undefined;
        const withAccessToken =
          ctx.oidc.route !== "authorization" && ctx.oidc.route !== "resume"
            ? true
            : String(ctx.oidc.params?.response_type ?? "")
                .split(" ")
                .includes("token");
        const userinfoInIdToken = use !== "id_token" || !withAccessToken || Boolean(client?.["platform_id_token_userinfo_assertion"]);
        const claims = userinfoInIdToken ? claimsOf(account, new Set(scopes)) : { sub };
        if (use === "id_token" && client?.["platform_id_token_role_assertion"]) {
          const projectId = client["platform_project_id"] as string | undefined;
          const roles = await roleClaims(db(), instanceId, sub, [...(projectId ? [projectId] : []), ...requestedProjects(scopes)], scopes);
          if (roles[ROLES_CLAIM]) Object.assign(claims, { [ROLES_CLAIM]: roles[ROLES_CLAIM] });
        }
        const refreshToken = (ctx.oidc.entities as { RefreshToken?: TokenLike }).RefreshToken;
        if (use === "id_token" && refreshToken) {
          const { act } = await exchangeOf(db, instanceId, refreshToken);
          if (act) Object.assign(claims, { act });
        }
        return claims as { sub: string };
      },
    };
  };
}

/**
 * `function/preuserinfo` for ID tokens: the provider keeps only the claims its configuration
 * names from what findAccount answers, so what functions add (any name) joins the payload
 * after that filter, as the provider's own `IdToken#set` extras do. The class is this
 * provider's own (one per Provider), so the wrapper changes no other instance's tokens.
 */
export function functionClaimsInIdTokens(provider: Provider, db: () => Db, instanceId: string, functions: ActionFunctions): void {
  const proto = provider.IdToken.prototype as unknown as { payload(): Promise<Record<string, unknown>> };
  const filtered = proto.payload;
  proto.payload = async function (this: unknown) {
    const claims = await filtered.call(this);
    const sub = claims.sub;
    return typeof sub === "string" ? asOidcError(functions.run(db(), instanceId, "preuserinfo", () => activeAccount(db(), instanceId, sub), claims)) : claims;
  };
}

/** A function target's refusal as the provider's error (400 access_denied), never a 500. */
async function asOidcError<T>(pending: Promise<T>): Promise<T> {
  try {
    return await pending;
  } catch (error) {
    if (error instanceof FunctionError) throw new errors.AccessDenied(error.message);
    throw error;
  }
}
