import type { IncomingMessage } from "node:http";
import type Provider from "oidc-provider";
import type { KoaContextWithOIDC } from "oidc-provider";
import { stateRefusal, type SignInCheck, type SignInMethod, type SignInRecorder } from "../../domain/audit/sign-ins.js";
import { requestOrigin } from "../../http/request-origin.js";
import type { Db } from "../../store/db.js";
import { JWT_BEARER } from "../models/clients.js";
import { basicClientId } from "../endpoints/client-auth.js";
import { refusedMachine, type MachineName } from "../../domain/user/machine-parties.js";

/**
 * Sign-ins at the token endpoint (channel `token`; domain/audit/sign-ins.ts): a machine user
 * by its secret (client_credentials: `client_secret`) or by an assertion signed with one of
 * its keys (jwt-bearer: `jwt_bearer`). An application authenticating to redeem a code or a
 * refresh token signs nobody in: not recorded. The provider finds active machine users only
 * (parties.ts); one it did not find is looked up once more to say why, so that a refused
 * request waits for one more statement, and a successful one for none.
 */

export interface TokenSignInDeps {
  db: () => Db;
  instanceId: string;
  signIns: SignInRecorder;
}

/** Records each token request of a machine user once the endpoint answered it. */
export function recordTokenSignIns(provider: Provider, deps: TokenSignInDeps): void {
  // The error is handed to the listener only; the outcome is read once the endpoint answered.
  const errors = new WeakMap<object, { error: string }>();
  provider.on("grant.error", (ctx, error) => errors.set(ctx, error));
  provider.use(async (koa, next) => {
    await next();
    const ctx = koa as unknown as KoaContextWithOIDC;
    if (ctx.oidc?.route !== "token") return;
    const method = methodOf(ctx.oidc.params?.grant_type);
    if (!method) return;
    await record(deps, ctx.req, () => outcomeOf(deps, ctx, method, errors.get(koa)?.error));
  });
}

/**
 * A jwt-bearer request refused before the provider saw it (mount.ts): its assertion names no
 * machine user that can sign it (`sub`), or nobody at all.
 */
export function recordRefusedAssertion(deps: TokenSignInDeps, req: IncomingMessage, sub: string | undefined): Promise<void> {
  return record(deps, req, async () =>
    sub === undefined ? { check: { method: "jwt_bearer", outcome: "invalid_key" } } : refusal(deps, "jwt_bearer", { userId: sub }, sub),
  );
}

/** An attempt, and the client it authenticated as when that names an account. */
type Outcome = { check: SignInCheck; clientId?: string };

const methodOf = (grantType: unknown): SignInMethod | undefined =>
  grantType === "client_credentials" ? "client_secret" : grantType === JWT_BEARER ? "jwt_bearer" : undefined;

async function record(deps: TokenSignInDeps, req: IncomingMessage, outcome: () => Promise<Outcome | undefined>): Promise<void> {
  let found: Outcome | undefined;
  try {
    found = await outcome();
  } catch {
    // Why could not be looked up (the database failing this request too): the attempt goes unrecorded rather than mislabelled.
    return;
  }
  if (!found) return;
  const origin = requestOrigin(req, found.clientId === undefined ? undefined : `app:${found.clientId}`);
  deps.signIns.record({ instanceId: deps.instanceId, channel: "token", origin, ...found.check });
}

async function outcomeOf(deps: TokenSignInDeps, ctx: KoaContextWithOIDC, method: SignInMethod, error: string | undefined): Promise<Outcome | undefined> {
  const client = ctx.oidc.client;
  const userId = client?.["platform_user_id"] as string | undefined;
  if (client && userId) {
    const user = { id: userId, orgId: client["platform_org_id"] as string };
    // A server error is no outcome; other errors came after the client checked out (a scope, a grant type it may not use).
    const outcome = !error
      ? ctx.status === 200
        ? "succeeded"
        : undefined
      : error === "invalid_client"
        ? "wrong_secret"
        : error === "invalid_grant"
          ? "invalid_key"
          : undefined;
    return outcome && { check: { method, outcome, user }, clientId: client.clientId };
  }
  // An application, or a request refused before any client was named.
  if (client || error !== "invalid_client") return undefined;
  const named = ctx.oidc.params?.client_id ?? (ctx.headers.authorization === undefined ? undefined : basicClientId(ctx.headers.authorization));
  if (typeof named !== "string") return undefined;
  return refusal(deps, method, method === "client_secret" ? { username: named } : { userId: named }, named);
}

/** Why the machine user `by` is no client: no such user (its name is not recorded), its state, or no secret or key to sign in with. */
async function refusal(deps: TokenSignInDeps, method: SignInMethod, by: MachineName, named: string): Promise<Outcome> {
  const machine = await refusedMachine(deps.db(), deps.instanceId, by);
  if (!machine) return { check: { method, outcome: "unknown_name" } };
  const outcome = stateRefusal(machine.state) ?? (machine.orgActive ? (method === "client_secret" ? "wrong_secret" : "invalid_key") : "inactive");
  return { check: { method, outcome, user: { id: machine.id, orgId: machine.orgId } }, clientId: named };
}
