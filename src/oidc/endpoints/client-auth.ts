import { createPublicKey } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import type { Db } from "../../store/db.js";
import { secretMatches } from "../models/clients.js";
import { ASSERTION_ALGORITHMS, ASSERTION_CLOCK_TOLERANCE_S, MAX_ASSERTION_LIFETIME_S } from "../provider/capabilities.js";
import type { Party } from "../models/parties.js";
import { OAuthError } from "./oauth-response.js";

export type ClientAuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt" | "none";

const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

export interface ClientAuthContext {
  db: Db;
  instanceId: string;
  /** Audiences an assertion may name: the issuer and this endpoint's URL. */
  audiences: string[];
  /** The application by client_id, else the machine user by username (cached: lookups.ts). */
  findParty(clientId: string): Promise<Party | undefined>;
  /** Records an assertion's jti; false when it was seen before. */
  unique(clientId: string, jti: string, exp: number): Promise<boolean>;
}

/**
 * Client authentication at introspection and revocation (RFC 6749 section 2.3, RFC 7523
 * section 2.2), with the methods the endpoint allows. The method used must be the one the
 * application registered (Basic and the body are one registration, as in the provider);
 * machine users authenticate with their secret.
 */
export async function authenticateClient(
  header: string | undefined,
  body: Record<string, string>,
  allowed: ReadonlySet<ClientAuthMethod>,
  context: ClientAuthContext,
): Promise<{ party: Party; method: ClientAuthMethod }> {
  const presented = [header !== undefined, body.client_secret !== undefined, body.client_assertion !== undefined].filter(Boolean).length;
  if (presented > 1) throw new OAuthError(400, "invalid_request", "client authentication must only be provided using one mechanism");
  let method: ClientAuthMethod;
  let clientId: string;
  let secret: string | undefined;
  if (header !== undefined) {
    ({ clientId, secret } = basicCredentials(header));
    if (body.client_id !== undefined && body.client_id !== clientId) throw new OAuthError(400, "invalid_request", "client_id mismatch");
    method = "client_secret_basic";
  } else if (body.client_secret !== undefined) {
    if (!body.client_id) throw new OAuthError(400, "invalid_request", "client_id is required with client_secret");
    clientId = body.client_id;
    secret = body.client_secret;
    method = "client_secret_post";
  } else if (body.client_assertion !== undefined) {
    if (body.client_assertion_type !== ASSERTION_TYPE) throw new OAuthError(400, "invalid_request", `client_assertion_type must be ${ASSERTION_TYPE}`);
    let sub: string | undefined;
    try {
      sub = decodeJwt(body.client_assertion).sub;
    } catch {
      throw new OAuthError(400, "invalid_request", "invalid client_assertion format");
    }
    if (!sub) throw invalidClient("the client_assertion has no sub");
    if (body.client_id !== undefined && body.client_id !== sub) throw new OAuthError(400, "invalid_request", "client_id mismatch");
    clientId = sub;
    method = "private_key_jwt";
  } else {
    if (!body.client_id) throw invalidClient("no client authentication mechanism provided");
    clientId = body.client_id;
    method = "none";
  }
  if (!allowed.has(method)) throw invalidClient(`${method} is not allowed at this endpoint; use ${[...allowed].join(" or ")}`, header !== undefined);
  if (clientId.length > 200) throw invalidClient("client not found", header !== undefined);

  const party = await context.findParty(clientId);
  if (!party) throw invalidClient("client not found", header !== undefined);
  const registered = party.kind === "app" ? (party.config.type === "oidc" ? party.config.oidc.authMethod : party.config.api.authMethod) : "basic";
  const uses = method === "client_secret_basic" || method === "client_secret_post" ? "secret" : method === "private_key_jwt" ? "jwt" : "none";
  const expected = registered === "basic" || registered === "post" ? "secret" : registered === "private_key_jwt" ? "jwt" : "none";
  if (uses !== expected)
    throw invalidClient("the provided authentication mechanism does not match the registered client authentication method", header !== undefined);
  if (uses === "secret" && !secretMatches(party.secretHash, secret)) throw invalidClient("invalid secret provided", header !== undefined);
  if (uses === "jwt") await verifyClientAssertion(body.client_assertion!, party, context);
  return { party, method };
}

/** The client_id of well-formed Basic credentials (the token endpoint's audit: oidc/helpers/token-sign-ins.ts). */
export function basicClientId(header: string): string | undefined {
  try {
    return basicCredentials(header).clientId;
  } catch {
    return undefined;
  }
}

function basicCredentials(header: string): { clientId: string; secret: string } {
  const match = /^basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header);
  const decoded = match ? Buffer.from(match[1]!, "base64").toString("utf8") : "";
  const colon = decoded.indexOf(":");
  if (colon < 1) throw new OAuthError(400, "invalid_request", "invalid authorization header value format");
  try {
    // RFC 6749 section 2.3.1: both parts are form-urlencoded before encoding.
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, "%20"));
    const secret = decode(decoded.slice(colon + 1));
    if (!secret) throw new OAuthError(400, "invalid_request", "client_secret must be provided in the Authorization header");
    return { clientId: decode(decoded.slice(0, colon)), secret };
  } catch (error) {
    if (error instanceof OAuthError) throw error;
    throw new OAuthError(400, "invalid_request", "client_id and client_secret in the authorization header are not properly encoded");
  }
}

async function verifyClientAssertion(assertion: string, party: Party, context: ClientAuthContext): Promise<void> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(assertion).kid;
  } catch {
    throw invalidClient("invalid client_assertion");
  }
  const keys = kid === undefined ? party.keys : party.keys.filter((k) => k.id === kid);
  for (const key of keys) {
    let payload;
    try {
      ({ payload } = await jwtVerify(assertion, createPublicKey(key.publicKey), {
        algorithms: ASSERTION_ALGORITHMS,
        issuer: party.clientId,
        subject: party.clientId,
        audience: context.audiences,
        requiredClaims: ["exp", "jti"],
        clockTolerance: ASSERTION_CLOCK_TOLERANCE_S,
      }));
    } catch {
      continue;
    }
    // Outside the try: a failing database is a server error, not a bad assertion.
    if (payload.exp! > Date.now() / 1000 + MAX_ASSERTION_LIFETIME_S + ASSERTION_CLOCK_TOLERANCE_S)
      throw invalidClient(`the client_assertion must expire within ${MAX_ASSERTION_LIFETIME_S} seconds`);
    if (!(await context.unique(party.clientId, String(payload.jti), payload.exp!))) throw invalidClient("the client_assertion was used before");
    return;
  }
  throw invalidClient("the client_assertion is not signed by a key of the client, or its claims are invalid");
}

function invalidClient(description: string, basic = false): OAuthError {
  return new OAuthError(401, "invalid_client", description, basic ? { "www-authenticate": `Basic error="invalid_client"` } : undefined);
}
