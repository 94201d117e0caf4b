import type { SecretBox } from "../../../crypto/encryption.js";
import type { Actor, ObjectDetails } from "../../../domain/details.js";
import { failedPrecondition, notFound } from "../../../domain/errors.js";
import { addIdpIntent, failIdpIntent, succeedIdpIntent, waitingIntent } from "../../../domain/idp-intent/commands.js";
import type { NewIntent } from "../../../domain/idp-intent/model.js";
import { linkedUser } from "../../../domain/user/external-identities.js";
import type { Logger } from "../../../log/logger.js";
import type { Db, Tx } from "../../../store/db.js";
import { newId } from "../../../store/ids.js";
import { putRecord } from "../../adapters/login-records.js";
import { UpstreamError } from "../../../upstream-idps/fetch.js";
import { activeProvider } from "./providers.js";
import { CALLBACK_PATH, STATE_MODEL, stateKey } from "./state.js";
import { authorizationUrl, newPending, redeem, upstreamOf, type Calls, type Pending } from "../../../upstream-idps/clients.js";

/**
 * External logins started through the API (PlatformIDPIntents, docs/api.md): the same
 * upstream flow as the login pages' (upstream.ts: state, PKCE, nonce, the code exchange, the
 * ID token's checks) and the same callback path, so a provider needs no second redirect URI.
 * Where the pages continue with an interaction, an intent ends at the login UI's success
 * URL with its ID and a token, or at its failure URL with an error.
 *
 * No browser binding as the pages have (browser-binding.ts): the start is a call of the
 * login UI's server, which never meets the browser's cookies here. What a foreign callback
 * could do — finish someone else's intent with the deliverer's account — ends at the login
 * UI's success URL in the deliverer's browser; a login UI that cares binds the intent's ID
 * to its own browser session at the start and compares it there (docs/api.md).
 */

/** What the start keeps for the callback, under the state's hash. */
export interface IntentState extends Pending {
  intentId: string;
  idpId: string;
  orgId: string;
  /** The callback URL sent upstream: the code exchange repeats it. */
  redirectUri: string;
}

export interface IntentStart {
  db: Db;
  /** A write of the API (it holds the instance). */
  transact<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  box: SecretBox;
  calls: Calls;
  /** PLATFORM_IDP_INTENT_TTL. */
  ttlMs: number;
}

/**
 * Starts an intent with a provider effectively active in the organization (and external
 * login allowed by its login settings): answers the provider's authorization URL, whose
 * callback is under `issuer`, the request's host.
 */
export async function startIntent(s: IntentStart, actor: Actor, intent: NewIntent, issuer: string): Promise<{ details: ObjectDetails; authUrl: string }> {
  const idp = await activeProvider(s.db, actor.instanceId, intent.orgId, intent.idpId);
  if (!idp) throw notFound(`no identity provider ${intent.idpId} is active in the organization (or its login settings do not allow external login)`);
  let upstream;
  try {
    upstream = await upstreamOf(idp, s.box, s.calls);
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    throw failedPrecondition(`the identity provider cannot be used (${error.kind}): ${error.message}`);
  }
  const pending = newPending();
  const id = newId();
  const redirectUri = issuer + CALLBACK_PATH;
  const state: IntentState = { ...pending, intentId: id, idpId: idp.id, orgId: intent.orgId, redirectUri };
  const details = await s.transact(async (tx) => {
    const added = await addIdpIntent(tx, actor, id, intent, new Date(Date.now() + s.ttlMs));
    await putRecord(tx, actor.instanceId, STATE_MODEL, stateKey(pending.state), state, Math.ceil(s.ttlMs / 1000));
    return added;
  });
  return { details, authUrl: authorizationUrl(upstream, pending, redirectUri) };
}

export interface IntentCallback {
  db: Db;
  transact<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  instanceId: string;
  box: SecretBox;
  calls: Calls;
  logger: Logger;
  intentTtlMs: number;
}

/** Upstream error codes (RFC 6749 4.1.2.1) are passed on as they are; anything else is not. */
const ERROR_CODE = /^[a-z_]{1,64}$/;

/**
 * The provider's return for an intent (its state taken by the callback): the code redeemed,
 * the intent finished. Answers where the browser goes: the success URL with `id`, `token`
 * and, when the account is linked to a user, `user`; or the failure URL with `id`, `error`
 * and `error_description`. `postedUser`: Apple's `user` field of a form_post callback. Undefined when the intent can no longer finish (expired, or its
 * instance gone).
 */
export async function finishIntent(c: IntentCallback, record: IntentState, query: URLSearchParams, postedUser?: string): Promise<string | undefined> {
  const failed = (error: string, description: string) =>
    c.transact(async (tx) => {
      const row = await waitingIntent(tx, c.instanceId, record.intentId);
      if (!row) return undefined;
      await failIdpIntent(tx, row, error);
      return withParams(row.failure_url, { id: row.id, error, error_description: description });
    });
  const code = query.get("code");
  const upstreamError = query.get("error");
  if (upstreamError !== null || !code) {
    const error = upstreamError !== null && ERROR_CODE.test(upstreamError) ? upstreamError : "invalid_request";
    return failed(error, upstreamError === null ? "the identity provider answered no code" : "the identity provider answered an error");
  }
  const idp = await activeProvider(c.db, c.instanceId, record.orgId, record.idpId);
  if (!idp) return failed("idp_inactive", "the identity provider is no longer active in the organization");
  let redeemed;
  try {
    redeemed = await redeem(await upstreamOf(idp, c.box, c.calls), c.calls, code, record, record.redirectUri, postedUser);
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    c.logger.warn(
      { kind: error.kind, reason: error.message, idpId: record.idpId, intentId: record.intentId },
      "idp intent: the identity provider could not be used",
    );
    return failed(error.kind === "invalid" ? "idp_invalid_answer" : "idp_unreachable", "the identity provider could not be used");
  }
  const { user, raw } = redeemed;
  const { id: externalUserId, ...identity } = user;
  return c.transact(async (tx) => {
    const row = await waitingIntent(tx, c.instanceId, record.intentId);
    if (!row) return undefined;
    const token = await succeedIdpIntent(tx, row, { externalUserId, identity, raw }, new Date(Date.now() + c.intentTtlMs));
    const linked = await linkedUser(tx, c.instanceId, record.idpId, externalUserId);
    return withParams(row.success_url, { id: row.id, token, ...(linked && { user: linked.userId }) });
  });
}

function withParams(base: string, params: Record<string, string>): string {
  const url = new URL(base);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.href;
}
