import Provider, { type Configuration, type KoaContextWithOIDC } from "oidc-provider";
import type { OidcSettings } from "../config/config.js";
import type { SecretBox } from "../crypto/encryption.js";
import type { Db } from "../store/eventstore.js";
import { activeAccount, claimsOf } from "./accounts.js";
import { clientAdapter, JWT_BEARER, PARTY_METADATA, secretMatches } from "./clients.js";
import { clientCredentialsGrant } from "./grants/client-credentials.js";
import { jwtBearerGrant } from "./grants/jwt-bearer.js";
import { payloadAdapters } from "./payload-adapter.js";
import { scopedDb } from "./request-scope.js";
import { OIDC_ROUTES } from "./routes.js";
import type { KeySet } from "./signing-keys.js";
import { JWT_RECORD_MODEL, jwtRecord } from "./tokens.js";

export interface ProviderDeps {
  instanceId: string;
  keys: KeySet;
  settings: OidcSettings;
  /** The process's database; requests use their own (request-scope.ts). */
  db: Db;
  box: SecretBox;
}

/** Client authentication methods, as the spec allows them per endpoint (section 4). */
export const CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"] as const;
export const ASSERTION_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"];

/**
 * One instance's provider at one issuer with one key set. Everything it keeps goes to the
 * instance's rows (payload-adapter.ts); its clients are our machine users (clients.ts); the
 * grants it serves are the ones registered below, and the endpoints the provider does not
 * serve itself (userinfo, introspection, revocation) are ours (endpoints/).
 */
export function createProvider(issuer: string, deps: ProviderDeps): Provider {
  const { instanceId, keys, settings } = deps;
  const db = () => scopedDb(deps.db);
  const Payloads = payloadAdapters(db, instanceId);
  const clients = clientAdapter(deps.db, instanceId);
  const jwtRecords = new Payloads(JWT_RECORD_MODEL);
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
    clientDefaults: { id_token_signed_response_alg: keys.signingAlg, grant_types: [], response_types: [] },
    enabledJWA: { idTokenSigningAlgValues: ["RS256", "ES256"], clientAuthSigningAlgValues: ASSERTION_ALGORITHMS as never },
    extraClientMetadata: { properties: [...PARTY_METADATA] },
    features: {
      devInteractions: { enabled: false },
      // Ours, with the spec's rules (endpoints/): the provider's revoke whole grants and
      // cannot introspect JWT access tokens.
      introspection: { enabled: false },
      revocation: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      // Not offered: nothing here checks sender-constrained tokens, nor pushed requests.
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
    },
    claims: {
      openid: ["sub"],
      profile: ["name", "given_name", "family_name", "nickname", "locale", "gender", "preferred_username", "updated_at"],
      email: ["email", "email_verified"],
      phone: ["phone_number", "phone_number_verified"],
      address: ["address"],
    },
    scopes: ["openid", "profile", "email", "phone", "address", "offline_access"],
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
    async findAccount(_ctx: KoaContextWithOIDC, sub: string) {
      const account = await activeAccount(db(), instanceId, sub);
      if (!account) return undefined;
      return { accountId: sub, claims: (_use: string, scope: string) => claimsOf(account, new Set(scope.split(" "))) as { sub: string } };
    },
    formats: {
      customizers: {
        // A JWT is not stored by the provider: record it by jti, so that it can be revoked and
        // introspected, and give it the audience list the provider cannot hold.
        async jwt(_ctx, token, jwt) {
          const payload = jwt.payload as Record<string, unknown>;
          const aud = (token as { aud?: string | string[] }).aud;
          if (aud !== undefined) payload.aud = aud;
          const record = jwtRecord(payload, token as never);
          await jwtRecords.upsert(String(payload.jti), record, Math.max(1, Number(payload.exp) - Math.floor(Date.now() / 1000)));
        },
      },
    },
  };

  const provider = new Provider(issuer, configuration);
  // Clients carry the SHA-256 of their secret (clients.ts), never the secret.
  provider.Client.prototype.compareClientSecret = function (this: { clientSecret?: string }, actual: string) {
    return secretMatches(this.clientSecret, actual);
  };
  provider.registerGrantType("client_credentials", clientCredentialsGrant(db, instanceId), ["scope"]);
  provider.registerGrantType(JWT_BEARER, jwtBearerGrant(db, instanceId), ["assertion", "scope"]);
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === "discovery" && ctx.body) Object.assign(ctx.body as object, discoveryAdditions(ctx as unknown as KoaContextWithOIDC));
    if (ctx.oidc?.route === "jwks" && ctx.status === 200) ctx.set("cache-control", `public, max-age=${settings.jwksMaxAgeS}`);
  });
  return provider;
}

/**
 * What discovery must say beyond the provider's own document: our endpoints, and only the
 * grants that work. The authorization endpoint arrives with the login pages.
 */
function discoveryAdditions(ctx: KoaContextWithOIDC): Record<string, unknown> {
  const url = (path: string) => new URL(path, ctx.oidc.issuer).href;
  return {
    authorization_endpoint: undefined,
    response_modes_supported: undefined,
    response_types_supported: [],
    grant_types_supported: ["client_credentials", JWT_BEARER],
    userinfo_endpoint: url(OIDC_ROUTES.userinfo),
    introspection_endpoint: url(OIDC_ROUTES.introspection),
    introspection_endpoint_auth_methods_supported: ["client_secret_basic", "private_key_jwt"],
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGORITHMS,
    revocation_endpoint: url(OIDC_ROUTES.revocation),
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGORITHMS,
    claims_supported: ["sub", "name", "given_name", "family_name", "nickname", "locale", "gender", "preferred_username", "updated_at", "email", "email_verified", "phone_number", "phone_number_verified"],
  };
}
