import { interactionUrl } from "./login-ui.js";
import type { SettingsKind } from "../../domain/settings/kind.js";
import type { ActionFunctions } from "../../engines/actions/functions.js";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from "oidc-provider";
import type { OidcSettings } from "../../config/oidc.js";
import type { SecretBox } from "../../crypto/encryption.js";
import type { Db } from "../../store/db.js";
import { ASSERTION_ALGORITHMS, CLAIMS, CLIENT_AUTH_METHODS } from "./capabilities.js";
import { ACR_VALUES } from "../helpers/acr.js";
import { afterAuthorization, beforeAuthorization } from "../helpers/authorization-rules.js";
import { withRoleCheck } from "../helpers/role-check.js";
import type { FeatureFlags } from "../../domain/feature/flags.js";
import { instanceLanguages } from "../../domain/settings/language.js";
import { clientAdapter, JWT_BEARER, PARTY_METADATA, secretMatches, TOKEN_EXCHANGE } from "../models/clients.js";
import type { OidcLookups } from "../helpers/lookups.js";
import { discoveryAdditions } from "./discovery.js";
import { clientCredentialsGrant } from "../endpoints/grants/client-credentials.js";
import { jwtBearerGrant } from "../endpoints/grants/jwt-bearer.js";
import { TOKEN_EXCHANGE_PARAMS, TOKEN_EXCHANGE_REPEATABLE, tokenExchangeGrant } from "../endpoints/grants/token-exchange.js";
import { PLATFORM_RESOURCE } from "../helpers/issue.js";
import { providerPages } from "../login/steps/provider-pages.js";
import { KnownAccounts, knownAccountsKey } from "../login/kit/known-accounts.js";
import { forgetSignedOut, loginPolicy } from "../login/kit/policy.js";
import { payloadAdapters } from "../adapters/payload-adapter.js";
import { scopedDb } from "./request-scope.js";
import { STANDARD_SCOPES } from "../helpers/scopes.js";
import { OIDC_ROUTES } from "./routes.js";
import type { KeySet } from "../models/signing-keys.js";
import { extraTokenClaims, findAccount, functionClaimsInIdTokens, jwtCustomizer, resourceScope } from "../helpers/token-claims.js";
import { keepRefreshTokenChains } from "../adapters/token-chains.js";
import { JWT_RECORD_MODEL } from "../adapters/token-models.js";
import { recordTokenSignIns } from "../helpers/token-sign-ins.js";
import type { SignInRecorder } from "../../domain/audit/sign-ins.js";

export interface ProviderDeps {
  instanceId: string;
  keys: KeySet;
  settings: OidcSettings;
  /** The process's database; requests use their own (request-scope.ts). */
  db: Db;
  box: SecretBox;
  /** Advanced when the provider ends tokens (ended-tokens.ts), so that no process keeps their principals. */
  access: AccessEpoch;
  /** Token exchange is a feature of the organization of the client's project. */
  flags: Pick<FeatureFlags, "resolve" | "forInstance">;
  /** Clients and projects cached until the next change of access; absent: read each time. */
  lookups?: OidcLookups;
  /** Action functions adding claims to ID tokens (preuserinfo) and JWT access tokens (preaccesstoken). */
  functions?: ActionFunctions;
  /** The login settings' kind with the configured defaults: where a login UI of one's own is (login-ui.ts). */
  loginSettings: SettingsKind;
  /** The audit log's sign-in events: machine users' at the token endpoint (token-sign-ins.ts). */
  signIns: SignInRecorder;
}

/** Rules of the provider's client validation that development mode lifts (http, localhost). */
const DEV_MODE_WAIVERS = new Set(["implicit-force-https", "implicit-forbid-localhost"]);

/**
 * One instance's provider at one issuer with one key set. Everything it keeps goes to the
 * instance's rows (payload-adapter.ts); its clients are our applications and machine users
 * (clients.ts); the grants are the provider's (authorization code, implicit, refresh) and
 * ours (grants/); the endpoints the provider does not serve as the spec wants (userinfo,
 * introspection, revocation) are ours (endpoints/); interactions are our login pages (login/).
 */
export function createProvider(issuer: string, deps: ProviderDeps): Provider {
  const { instanceId, keys, settings } = deps;
  const db = () => scopedDb(deps.db);
  const Payloads = payloadAdapters(db, instanceId, deps.access);
  const clients = clientAdapter(deps.db, instanceId, issuer, deps.lookups);
  const pages = providerPages(db, instanceId);
  // The accounts signed in on a browser (login/kit/known-accounts.ts), keyed like the login pages'.
  const known = new KnownAccounts(db, instanceId, knownAccountsKey(deps.box.derive(`login-forms:${instanceId}`)), settings.refreshTokenTtlS);
  // The provider calls `new adapter(model)`; a constructor returning an object yields that object.
  const adapter = function (this: unknown, model: string) {
    return model === "Client" ? clients : new Payloads(model);
  } as unknown as Configuration["adapter"];

  const configuration: Configuration = {
    adapter,
    clients: [],
    jwks: { keys: keys.privateJwks as never },
    routes: OIDC_ROUTES,
    cookies: { keys: [deps.box.derive(`oidc-cookies:${instanceId}`)] },
    clientAuthMethods: [...CLIENT_AUTH_METHODS],
    // auth_time in every ID token (as ZITADEL), not only with max_age or prompt=login: relying
    // parties that keep their own maximum age need it.
    clientDefaults: { id_token_signed_response_alg: keys.signingAlg, grant_types: [], response_types: [], require_auth_time: true },
    enabledJWA: { idTokenSigningAlgValues: ["RS256", "ES256"], clientAuthSigningAlgValues: ASSERTION_ALGORITHMS as never },
    extraClientMetadata: { properties: [...PARTY_METADATA] },
    interactions: {
      policy: withRoleCheck(loginPolicy(known, { db, instanceId, loginSettings: deps.loginSettings }), db, instanceId),
      url: interactionUrl(db, instanceId, deps.loginSettings),
    },
    pkce: { required: (_ctx, client) => client.tokenEndpointAuthMethod === "none" },
    // The spec requires redirect_uri at the authorization and token endpoints; the provider's
    // OAuth 2.0 default takes a client's only registered URI when it is missing.
    allowOmittingSingleRegisteredRedirectUri: false,
    rotateRefreshToken: true,
    // Ending the browser session ends the tokens of its grants, offline ones too (spec, end
    // session); the provider's default keeps grants with offline_access.
    expiresWithSession: () => true,
    responseTypes: ["code", "id_token", "id_token token"],
    features: {
      devInteractions: { enabled: false },
      // Ours, with the spec's rules (endpoints/): the provider's revoke whole grants and
      // cannot introspect JWT access tokens.
      introspection: { enabled: false },
      revocation: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: true, logoutSource: pages.logoutSource, postLogoutSuccessSource: pages.postLogoutSuccessSource },
      // Not offered: nothing here checks sender-constrained tokens, nor pushed requests.
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // One resource, this service: it decides each client's token format and audience.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => PLATFORM_RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo(ctx, resource, client) {
          if (resource !== PLATFORM_RESOURCE) throw new errors.InvalidTarget("resource indicators are not supported");
          return {
            scope: resourceScope(ctx),
            audience: client.clientId,
            accessTokenFormat: client["platform_access_token_type"] === "jwt" ? "jwt" : "opaque",
            accessTokenTTL: settings.accessTokenTtlS,
          };
        },
      },
    },
    claims: CLAIMS,
    // The ID token's acr (acr.ts), listed as acr_values_supported.
    acrValues: ACR_VALUES,
    scopes: [...STANDARD_SCOPES],
    ttl: {
      AccessToken: settings.accessTokenTtlS,
      ClientCredentials: settings.accessTokenTtlS,
      IdToken: settings.idTokenTtlS,
      RefreshToken: settings.refreshTokenTtlS,
      Grant: settings.refreshTokenTtlS,
      Session: settings.refreshTokenTtlS,
      Interaction: 3600,
      AuthorizationCode: 60,
    },
    renderError: pages.renderError as Configuration["renderError"],
    findAccount: findAccount(db, instanceId),
    extraTokenClaims: extraTokenClaims(db, instanceId, deps.lookups) as Configuration["extraTokenClaims"],
    formats: { customizers: { jwt: jwtCustomizer(new Payloads(JWT_RECORD_MODEL), db, instanceId, deps.functions) as never } },
  };

  const provider = new Provider(issuer, configuration);
  keepRefreshTokenChains(provider);
  recordTokenSignIns(provider, { db, instanceId, signIns: deps.signIns });
  if (deps.functions) functionClaimsInIdTokens(provider, db, instanceId, deps.functions);
  // Clients carry the SHA-256 of their secret (clients.ts), never the secret.
  provider.Client.prototype.compareClientSecret = function (this: { clientSecret?: string }, actual: string) {
    return secretMatches(this.clientSecret, actual);
  };
  const { Schema } = provider.Client as unknown as { Schema: { prototype: { invalidate(message: string, code?: string): void; platform_dev_mode?: boolean } } };
  const invalidate = Schema.prototype.invalidate;
  Schema.prototype.invalidate = function (message, code) {
    if (this.platform_dev_mode && code && DEV_MODE_WAIVERS.has(code)) return;
    invalidate.call(this, message, code);
  };
  provider.registerGrantType("client_credentials", clientCredentialsGrant(db, instanceId, deps.lookups), ["scope"]);
  provider.registerGrantType(JWT_BEARER, jwtBearerGrant(db, instanceId), ["assertion", "scope"]);
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    tokenExchangeGrant({ db, instanceId, keys, settings, flags: deps.flags }),
    TOKEN_EXCHANGE_PARAMS,
    TOKEN_EXCHANGE_REPEATABLE,
  );
  provider.use(async (ctx, next) => {
    if (await beforeAuthorization(ctx as unknown as KoaContextWithOIDC, provider)) return;
    await next();
    if (ctx.oidc?.route === "authorization" || ctx.oidc?.route === "resume") afterAuthorization(ctx as unknown as KoaContextWithOIDC);
    await forgetSignedOut(ctx as unknown as KoaContextWithOIDC, known);
    if (ctx.oidc?.route === "discovery" && ctx.body) {
      const [flags, languages] = await Promise.all([
        deps.flags.forInstance(instanceId),
        deps.lookups ? deps.lookups.languages(db(), instanceId) : instanceLanguages(db(), instanceId),
      ]);
      Object.assign(ctx.body as object, discoveryAdditions(ctx as unknown as KoaContextWithOIDC, { tokenExchange: flags.token_exchange, languages }));
    }
    if (ctx.oidc?.route === "jwks" && ctx.status === 200) ctx.set("cache-control", `public, max-age=${settings.jwksMaxAgeS}`);
    // RFC 6749 section 5.2 names this case unauthorized_client; the provider says invalid_request.
    const body = ctx.body as { error?: string; error_description?: string } | undefined;
    if (ctx.oidc?.route === "token" && body?.error === "invalid_request" && body.error_description === "requested grant type is not allowed for this client") {
      body.error = "unauthorized_client";
    }
  });
  return provider;
}
