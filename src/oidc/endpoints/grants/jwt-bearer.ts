import { createPublicKey } from "node:crypto";
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from "jose";
import { errors, type KoaContextWithOIDC } from "oidc-provider";
import type { Db } from "../../../store/db.js";
import { ASSERTION_ALGORITHMS, ASSERTION_CLOCK_TOLERANCE_S, MAX_ASSERTION_LIFETIME_S } from "../../provider/capabilities.js";
import { issueAccessToken } from "../../helpers/issue.js";
import type { PartyKey } from "../../../domain/app/parties.js";
import { machineParty } from "../../../domain/user/machine-parties.js";
import { claimAssertion } from "../../adapters/payload-adapter.js";
import { audienceAndScope, isKnownScope, splitScope } from "../../helpers/scopes.js";

/**
 * RFC 7523 section 2.1: a machine user proves itself with a JWT signed by one of its keys
 * (PlatformUsers AddKey), `iss` and `sub` its user id, `aud` this issuer or its token
 * endpoint. The request carries no client authentication; the token endpoint treats the
 * assertion's subject as the client (mount.ts), which the provider finds by user id.
 */
export function jwtBearerGrant(db: () => Db, instanceId: string) {
  return async (ctx: KoaContextWithOIDC) => {
    const { provider } = ctx.oidc;
    const params = ctx.oidc.params as { assertion?: string; scope?: string };
    const client = ctx.oidc.client!;
    if (!params.assertion) throw new errors.InvalidRequest("missing required parameter 'assertion'");
    const party = await machineParty(db(), instanceId, { userId: client.clientId });
    if (!party) throw new errors.InvalidGrant("the assertion's subject is not an active machine user");
    const claims = await verifyAssertion(params.assertion, party.userId, party.keys, [provider.issuer, ctx.oidc.urlFor("token")]);
    // Without a jti, the signature (the assertion's last part) stands for it.
    const unique = await claimAssertion(
      db(),
      instanceId,
      party.userId,
      claims.jti ?? `sig:${params.assertion.slice(params.assertion.lastIndexOf(".") + 1)}`,
      claims.exp!,
    );
    if (!unique) throw new errors.InvalidGrant("the assertion was used before");

    const asked = splitScope(params.scope).filter((s) => isKnownScope(s) && s !== "offline_access");
    const { aud, scopes } = await audienceAndScope(db(), instanceId, { clientId: client.clientId }, asked);
    const format = party.accessTokenType === "jwt" ? "jwt" : "opaque";
    const issued = await issueAccessToken(ctx, { accountId: party.userId, scopes, aud, format, gty: "jwt-bearer" });
    const body: Record<string, unknown> = { access_token: issued.value, token_type: "Bearer", expires_in: issued.expiresIn, scope: scopes.join(" ") };
    if (scopes.includes("openid")) {
      // With an access token issued, the ID token carries no profile claims (spec, section 4).
      const idToken = new provider.IdToken({ sub: party.userId }, { ctx });
      (idToken as unknown as { scope: string }).scope = "openid";
      idToken.set("at_hash", issued.value);
      body.id_token = await idToken.issue({ use: "idtoken" });
    }
    ctx.body = body;
  };
}

async function verifyAssertion(assertion: string, userId: string, keys: PartyKey[], audience: string[]): Promise<JWTPayload> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(assertion).kid;
  } catch {
    throw new errors.InvalidGrant("the assertion is not a JWT");
  }
  const candidates = kid === undefined ? keys : keys.filter((k) => k.id === kid);
  if (candidates.length === 0) throw new errors.InvalidGrant("the assertion is signed by no key of the machine user");
  for (const key of candidates) {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(assertion, createPublicKey(key.publicKey), {
        algorithms: ASSERTION_ALGORITHMS,
        issuer: userId,
        subject: userId,
        audience,
        requiredClaims: ["exp"],
        clockTolerance: ASSERTION_CLOCK_TOLERANCE_S,
      }));
    } catch (error) {
      if (candidates.length === 1) throw new errors.InvalidGrant(`the assertion is invalid: ${(error as Error).message}`);
      continue;
    }
    if (payload.exp! > Date.now() / 1000 + MAX_ASSERTION_LIFETIME_S + ASSERTION_CLOCK_TOLERANCE_S) {
      throw new errors.InvalidGrant(`the assertion must expire within ${MAX_ASSERTION_LIFETIME_S} seconds`);
    }
    return payload;
  }
  throw new errors.InvalidGrant("the assertion is signed by no key of the machine user");
}
