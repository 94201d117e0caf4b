import { errors, type KoaContextWithOIDC } from "oidc-provider";
import type { OidcSettings } from "../../../config/oidc.js";
import type { FeatureFlags } from "../../../domain/feature/flags.js";
import type { Db } from "../../../store/db.js";
import type { Account } from "../../../domain/user/accounts.js";
import { claimsOf } from "../../models/accounts.js";
import { EXCHANGE_GTY, saveExchange, type Actor } from "../../helpers/exchange-grants.js";
import { issueAccessToken, PLATFORM_RESOURCE } from "../../helpers/issue.js";
import { payloadAdapters } from "../../adapters/payload-adapter.js";
import { roleClaims, ROLES_CLAIM } from "../../helpers/roles.js";
import { requestedProjects, STANDARD_SCOPES } from "../../helpers/scopes.js";
import type { KeySet } from "../../models/signing-keys.js";
import { JWT_RECORD_MODEL } from "../../adapters/token-models.js";
import { exchangeAudience, exchangeScopes } from "./exchange-rules.js";
import { TOKEN_TYPE, verifyExchangeToken } from "./exchange-tokens.js";

/** RFC 8693 section 2.1; `audience` and `resource` may be repeated. */
export const TOKEN_EXCHANGE_PARAMS = [
  "subject_token",
  "subject_token_type",
  "actor_token",
  "actor_token_type",
  "requested_token_type",
  "scope",
  "audience",
  "resource",
];
export const TOKEN_EXCHANGE_REPEATABLE = ["audience", "resource"];

/** The spec's matrix: what may be asked for, and the token type each answer carries. */
const ISSUABLE = new Set<string>([TOKEN_TYPE.accessToken, TOKEN_TYPE.jwt, TOKEN_TYPE.idToken]);

export interface TokenExchangeDeps {
  db: () => Db;
  instanceId: string;
  keys: KeySet;
  settings: OidcSettings;
  flags: Pick<FeatureFlags, "resolve">;
}

interface ExchangeParams {
  subjectToken?: string;
  subjectTokenType?: string;
  actorToken?: string;
  actorTokenType?: string;
  requestedTokenType: string;
  scope?: string;
  audience: string[];
  resource: string[];
}

/**
 * RFC 8693 token exchange for applications whose grant types include it, when the feature
 * flag `token_exchange` is on for the organization of the application's project. Without an
 * actor token the subject's token is exchanged (narrower scope or audience, another type);
 * with one, the actor impersonates the subject and the issued tokens name it in `act`.
 */
export function tokenExchangeGrant(deps: TokenExchangeDeps) {
  const { db, instanceId, settings } = deps;
  const Payloads = payloadAdapters(db, instanceId);
  return async (ctx: KoaContextWithOIDC) => {
    const { provider } = ctx.oidc;
    const client = ctx.oidc.client!;
    const orgId = client["platform_org_id"] as string | undefined;
    const projectId = client["platform_project_id"] as string | undefined;
    if (!orgId || !projectId) throw new errors.UnauthorizedClient("token exchange is for applications");
    // RFC 6749 section 5.2: the grant exists here, this client may just not use it.
    if (!(await deps.flags.resolve({ type: "org", instanceId, orgId }, db())).token_exchange) {
      throw new errors.UnauthorizedClient("token exchange is not enabled for the organization of this application");
    }
    const p = readParams(ctx.oidc.params as Record<string, unknown>);
    if (p.resource.length > 0) throw new errors.InvalidTarget("the resource parameter is not supported; use audience");
    if (!p.subjectToken) throw new errors.InvalidRequest("missing required parameter 'subject_token'");
    if (!p.subjectTokenType) throw new errors.InvalidRequest("missing required parameter 'subject_token_type'");
    if (p.actorToken && !p.actorTokenType) throw new errors.InvalidRequest("actor_token_type is required with actor_token");
    if (!p.actorToken && p.actorTokenType) throw new errors.InvalidRequest("actor_token_type must not be sent without actor_token");
    if (!ISSUABLE.has(p.requestedTokenType)) throw new errors.InvalidRequest(`requested_token_type ${p.requestedTokenType} is not supported`);
    if ((p.subjectTokenType === TOKEN_TYPE.jwt || p.subjectTokenType === TOKEN_TYPE.userId) && !p.actorToken) {
      throw new errors.InvalidRequest(`a subject_token of type ${p.subjectTokenType} needs an actor_token`);
    }

    const verifier = {
      db: db(),
      instanceId,
      keys: deps.keys,
      issuer: provider.issuer,
      audiences: [provider.issuer, ctx.oidc.urlFor("token")],
      client: { clientId: client.clientId, projectId, orgId },
      accessTokens: new Payloads("AccessToken"),
      jwtRecords: new Payloads(JWT_RECORD_MODEL),
    };
    const subject = await verifyExchangeToken(verifier, "subject", p.subjectToken, p.subjectTokenType);
    const actor = p.actorToken ? await verifyExchangeToken(verifier, "actor", p.actorToken, p.actorTokenType!) : undefined;
    const aud = exchangeAudience(p.audience, subject, actor, client.clientId);
    let scopes = exchangeScopes(p.scope, subject, actor);
    // A refresh token only for an access token, and only for an application that may refresh.
    if (p.requestedTokenType === TOKEN_TYPE.idToken || !client.grantTypeAllowed("refresh_token")) scopes = scopes.filter((s) => s !== "offline_access");
    // Without an actor, an impersonation stays one: the subject token's actor carries over.
    const act: Actor | undefined = actor ? { sub: actor.account.userId, iss: provider.issuer, ...(actor.act && { act: actor.act }) } : subject.act;
    const user = subject.account;

    if (p.requestedTokenType === TOKEN_TYPE.idToken) {
      // RFC 8693 section 2.2.1: an ID token is no access token, so its token_type is N_A.
      const idToken = await issueIdToken(ctx, deps, user, scopes, { act, withAccessToken: false });
      ctx.body = { access_token: idToken, issued_token_type: TOKEN_TYPE.idToken, token_type: "N_A", expires_in: settings.idTokenTtlS, scope: scopes.join(" ") };
      return;
    }
    const grantId = scopes.includes("offline_access") ? await saveGrant(ctx, deps, user, scopes, { act, aud }) : undefined;
    const issued = await issueAccessToken(ctx, {
      accountId: user.userId,
      scopes,
      aud,
      // The matrix: an access token is asked for as opaque, a JWT as a JWT access token.
      format: p.requestedTokenType === TOKEN_TYPE.jwt ? "jwt" : "opaque",
      gty: EXCHANGE_GTY,
      ...(grantId && { grantId }),
      ...(act && { act: act as unknown as Record<string, unknown> }),
    });
    const body: Record<string, unknown> = {
      access_token: issued.value,
      issued_token_type: p.requestedTokenType,
      token_type: "Bearer",
      expires_in: issued.expiresIn,
      scope: scopes.join(" "),
    };
    if (grantId) {
      const refreshToken = new provider.RefreshToken({
        accountId: user.userId,
        client,
        grantId,
        gty: EXCHANGE_GTY,
        scope: scopes.join(" "),
        resource: PLATFORM_RESOURCE,
        // No browser session stands behind it; it ends with its grant, by revocation or expiry.
        expiresWithSession: false,
        rotations: 0,
      } as ConstructorParameters<typeof provider.RefreshToken>[0]);
      ctx.oidc.entity("RefreshToken", refreshToken);
      body.refresh_token = await refreshToken.save();
    }
    if (scopes.includes("openid")) body.id_token = await issueIdToken(ctx, deps, user, scopes, { act, withAccessToken: true, accessToken: issued.value });
    ctx.body = body;
  };
}

function readParams(params: Record<string, unknown>): ExchangeParams {
  // An empty value is no value (`actor_token=` as sent by some forms).
  const one = (name: string) => {
    const value = params[name];
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  // RFC 8693 repeats the parameter; a space-separated list is accepted too, as ZITADEL does.
  const many = (name: string) => {
    const value = params[name];
    const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
    return values.flatMap((v) => String(v).split(" ")).filter(Boolean);
  };
  return {
    subjectToken: one("subject_token"),
    subjectTokenType: one("subject_token_type"),
    actorToken: one("actor_token"),
    actorTokenType: one("actor_token_type"),
    requestedTokenType: one("requested_token_type") ?? TOKEN_TYPE.accessToken,
    scope: one("scope"),
    audience: many("audience"),
    resource: many("resource"),
  };
}

/**
 * The provider's grant behind a refresh token, so that its refresh grant serves exchanged
 * tokens like any others; the actor and audience are kept beside it (exchange-grants.ts).
 */
async function saveGrant(
  ctx: KoaContextWithOIDC,
  deps: TokenExchangeDeps,
  user: Account,
  scopes: string[],
  kept: { act?: Actor; aud: string[] },
): Promise<string> {
  const grant = new ctx.oidc.provider.Grant({ accountId: user.userId, clientId: ctx.oidc.client!.clientId });
  grant.addOIDCScope(scopes.filter((s) => (STANDARD_SCOPES as readonly string[]).includes(s)).join(" "));
  grant.addResourceScope(PLATFORM_RESOURCE, scopes.join(" "));
  const grantId = await grant.save();
  await saveExchange(deps.db, deps.instanceId, grantId, { ...(kept.act && { act: kept.act }), aud: kept.aud }, deps.settings.refreshTokenTtlS);
  ctx.oidc.entity("Grant", grant);
  return grantId;
}

/**
 * An ID token of the subject. As everywhere (spec, section 4): with an access token it
 * carries no profile, email or phone claims unless the application asserts them; roles when
 * it sets id_token_role_assertion; and the actor of an impersonation.
 */
async function issueIdToken(
  ctx: KoaContextWithOIDC,
  deps: TokenExchangeDeps,
  user: Account,
  scopes: string[],
  o: { act?: Actor; withAccessToken: boolean; accessToken?: string },
): Promise<string> {
  const client = ctx.oidc.client!;
  const withUserinfo = !o.withAccessToken || Boolean(client["platform_id_token_userinfo_assertion"]);
  const claims: Record<string, unknown> = withUserinfo ? claimsOf(user, new Set(scopes)) : { sub: user.userId };
  if (client["platform_id_token_role_assertion"]) {
    const projectId = client["platform_project_id"] as string;
    const roles = await roleClaims(deps.db(), deps.instanceId, user.userId, [projectId, ...requestedProjects(scopes)], scopes);
    if (roles[ROLES_CLAIM]) claims[ROLES_CLAIM] = roles[ROLES_CLAIM];
  }
  const idToken = new ctx.oidc.provider.IdToken(claims, { ctx });
  // The provider masks claims by scope; openid keeps `sub` (and roles) in any case.
  (idToken as unknown as { scope: string }).scope = ["openid", ...scopes].join(" ");
  if (o.accessToken) idToken.set("at_hash", o.accessToken);
  if (o.act) idToken.set("act", o.act);
  return idToken.issue({ use: "idtoken" });
}
