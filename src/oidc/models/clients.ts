import { constantTimeEqual } from "../../crypto/equal.js";
import { hashToken } from "../../crypto/tokens.js";
import type { Db } from "../../store/db.js";
import type { AppParty, PartyKey } from "../../domain/app/parties.js";
import { machineParty, type MachineParty } from "../../domain/user/machine-parties.js";
import { findParty } from "./parties.js";
import { createPublicKey } from "node:crypto";
import type { OidcAdapter, OidcPayload } from "../adapters/payload-adapter.js";
import { isJwtBearerRequest, scopedDb } from "../provider/request-scope.js";
import type { OidcLookups } from "../helpers/lookups.js";

/** How clients are found: straight from the tables, or through the per-process cache (lookups.ts). */
export type PartyLookups = Pick<OidcLookups, "party" | "machine">;

export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
export const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";

/** Client metadata of ours the provider carries along (extraClientMetadata). */
export const PARTY_METADATA = [
  "platform_user_id",
  "platform_org_id",
  "platform_access_token_type",
  "platform_project_id",
  "platform_project_role_check",
  "platform_dev_mode",
  "platform_id_token_userinfo_assertion",
  "platform_id_token_role_assertion",
  "platform_access_token_role_assertion",
] as const;

/**
 * The provider's clients, read from our tables or the per-process cache that every change
 * of access clears (lookups.ts; the provider caches the built client by its metadata): OpenID Connect applications of active projects of active
 * organizations, by client_id; machine users for the client_credentials grant by username,
 * with their hashed secret, and for the jwt-bearer grant by id, without one: the assertion
 * they sign is their authentication. An application's client_id wins over a machine user
 * named the same.
 */
export function clientAdapter(db: Db, instanceId: string, issuer: string, parties: PartyLookups = { party: findParty, machine: machineParty }): OidcAdapter {
  const refuse = async () => {
    throw new Error("clients are managed through PlatformApps and PlatformUsers");
  };
  return {
    async find(id: string) {
      if (id.length > 200) return undefined;
      const jwtBearer = isJwtBearerRequest();
      const party = jwtBearer ? await parties.machine(scopedDb(db), instanceId, { userId: id }) : await parties.party(scopedDb(db), instanceId, id);
      if (!party) return undefined;
      if (party.kind === "app") return party.config.type === "oidc" ? appMetadata(party, issuer) : undefined;
      if (jwtBearer) return party.keys.length > 0 ? metadata(party, { grant_types: [JWT_BEARER], token_endpoint_auth_method: "none" }) : undefined;
      return party.secretHash
        ? metadata(party, { grant_types: ["client_credentials"], token_endpoint_auth_method: "client_secret_basic", client_secret: party.secretHash })
        : undefined;
    },
    findByUid: async () => undefined,
    findByUserCode: async () => undefined,
    upsert: refuse,
    consume: refuse,
    destroy: refuse,
    revokeByGrantId: refuse,
  };
}

function metadata(party: MachineParty, grant: Record<string, unknown>): OidcPayload {
  return {
    client_id: party.clientId,
    redirect_uris: [],
    response_types: [],
    ...grant,
    platform_user_id: party.userId,
    platform_org_id: party.orgId,
    platform_access_token_type: party.accessTokenType,
  };
}

const AUTH_METHOD = { basic: "client_secret_basic", post: "client_secret_post", none: "none", private_key_jwt: "private_key_jwt" } as const;

/**
 * A redirect URI that is a path (only the console's application has them:
 * domain/instance/console-app.ts) is one on the issuer's own origin: on every domain of the
 * instance, each its own issuer.
 */
const onIssuer = (issuer: string) => (uri: string) => (uri.startsWith("/") ? `${issuer}${uri}` : uri);

/** An OpenID Connect application as the provider's client metadata (RFC 7591 names). */
function appMetadata(app: AppParty, issuer: string): OidcPayload {
  if (app.config.type !== "oidc") throw new Error("not an OpenID Connect application");
  const c = app.config.oidc;
  const customScheme = c.redirectUris.some((uri) => !/^https?:/i.test(uri));
  return {
    client_id: app.clientId,
    ...(app.secretHash && { client_secret: app.secretHash }),
    token_endpoint_auth_method: AUTH_METHOD[c.authMethod],
    ...(c.authMethod === "private_key_jwt" && { jwks: { keys: app.keys.map(publicJwk) } }),
    redirect_uris: c.redirectUris.map(onIssuer(issuer)),
    post_logout_redirect_uris: c.postLogoutRedirectUris.map(onIssuer(issuer)),
    response_types: c.responseTypes,
    grant_types: c.grantTypes.map((g) => (g === "token_exchange" ? TOKEN_EXCHANGE : g)),
    // Development mode allows http anywhere (oidc-rules.ts): as a web client, unless a
    // redirect needs a native app's own scheme.
    application_type: c.appType === "native" && (!c.devMode || customScheme) ? "native" : "web",
    platform_org_id: app.orgId,
    platform_project_id: app.projectId,
    platform_project_role_check: app.roleCheck,
    platform_access_token_type: c.accessTokenType,
    platform_dev_mode: c.devMode,
    platform_id_token_userinfo_assertion: c.idTokenUserinfoAssertion,
    platform_id_token_role_assertion: c.idTokenRoleAssertion,
    platform_access_token_role_assertion: c.accessTokenRoleAssertion,
  };
}

function publicJwk(key: PartyKey): Record<string, unknown> {
  return { ...createPublicKey(key.publicKey).export({ format: "jwk" }), kid: key.id, use: "sig" };
}

/**
 * Client secrets are stored as SHA-256 hashes (they are random, so a fast hash suffices; see
 * crypto/tokens.ts); the provider's client holds the hash, and this compares against it.
 */
export function secretMatches(storedHash: string | null | undefined, presented: string | undefined): boolean {
  if (!storedHash || !presented) return false;
  return constantTimeEqual(hashToken(presented), storedHash);
}
