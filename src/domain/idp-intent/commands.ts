import type { Updateable } from "kysely";
import { hashToken, newOpaqueToken } from "../../crypto/tokens.js";
import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Db, Tx } from "../../store/db.js";
import { SYSTEM_EDITOR, type Editor } from "../../store/editor.js";
import type { Appended, PendingEvent } from "../../store/events.js";
import type { IdpIntentRow, IdpIntentTable } from "../../store/schema.js";
import { instanceOwnedDetails, type Actor, type ObjectDetails } from "../details.js";
import { failedPrecondition } from "../errors.js";
import { checkLoginUiUrl } from "../settings/login.js";
import { constantTimeEqual } from "../../crypto/equal.js";
import { AGGREGATE, type NewIntent, type UpstreamIdentity } from "./model.js";

/**
 * The life of an intent: started by the API (`started`), finished by the provider's
 * callback (`succeeded` with a token, or `failed`), used up by one session check
 * (`consumed`). Each step is an event (`idp_intent.started`, `.succeeded`, `.failed`,
 * `.consumed`) on the intent's projection row; events never carry the token nor what the
 * provider said beyond the account's ID.
 */

/** Who writes the callback's steps: the provider's answer, on nobody's behalf. */

export async function addIdpIntent(tx: Tx, actor: Actor, id: string, intent: NewIntent, expiresAt: Date): Promise<ObjectDetails> {
  // The browser is sent there with the token: the login UI's rules (https, http on localhost).
  for (const [field, url] of [
    ["success_url", intent.successUrl],
    ["failure_url", intent.failureUrl],
  ] as const)
    checkLoginUiUrl(url, field);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: intent.orgId },
    0,
    [{ type: "idp_intent.started", payload: { idpId: intent.idpId, orgId: intent.orgId } }],
    actor,
  );
  await tx
    .insertInto("idp_intents")
    .values({
      instance_id: actor.instanceId,
      id,
      idp_id: intent.idpId,
      org_id: intent.orgId,
      success_url: intent.successUrl,
      failure_url: intent.failureUrl,
      state: "started",
      expires_at: expiresAt,
      ...createdBy(appended),
    })
    .execute();
  return { id, sequence: appended.sequence, changeDate: appended.createdAt, owner: { type: "instance", id: actor.instanceId } };
}

/** An intent waiting for its callback (started, not expired), locked; undefined otherwise. */
export async function waitingIntent(tx: Tx, instanceId: string, id: string): Promise<IdpIntentRow | undefined> {
  const row = await tx.selectFrom("idp_intents").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).forUpdate().executeTakeFirst();
  return row && row.state === "started" && row.expires_at.getTime() > Date.now() ? row : undefined;
}

/** The callback's success: the person kept, a token made (answered once) that is usable until `expiresAt`. */
export async function succeedIdpIntent(tx: Tx, row: IdpIntentRow, found: UpstreamIdentity, expiresAt: Date): Promise<string> {
  const token = newOpaqueToken();
  await changeIntent(tx, row, { type: "idp_intent.succeeded", payload: { externalUserId: found.externalUserId } }, SYSTEM_EDITOR, {
    state: "succeeded",
    token_hash: hashToken(token),
    external_user_id: found.externalUserId,
    identity: JSON.stringify(found.identity),
    raw_information: JSON.stringify(found.raw),
    expires_at: expiresAt,
  });
  return token;
}

/** The callback's failure (`error` as the failure URL receives it); the intent is of no use after it. */
export async function failIdpIntent(tx: Tx, row: IdpIntentRow, error: string): Promise<void> {
  await changeIntent(tx, row, { type: "idp_intent.failed", payload: { error } }, SYSTEM_EDITOR, { state: "failed" });
}

export type Proven =
  | { ok: true; row: IdpIntentRow & { external_user_id: string } }
  | { ok: false; kind: "missing" | "wrong_token" }
  | { ok: false; kind: "unusable"; error: Error };

/**
 * The intent a token proves (locked in a transaction): `missing` for an ID of no intent of
 * the instance, `wrong_token`; else what keeps a proven intent from being used
 * (FailedPrecondition: used, not succeeded, expired), or the intent.
 */
export async function provenIntent(db: Db | Tx, instanceId: string, id: string, token: string, lock: boolean): Promise<Proven> {
  let q = db.selectFrom("idp_intents").selectAll().where("instance_id", "=", instanceId).where("id", "=", id);
  if (lock) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) return { ok: false, kind: "missing" };
  if (!row.token_hash || !constantTimeEqual(row.token_hash, hashToken(token))) return { ok: false, kind: "wrong_token" };
  const refuse = (why: string): Proven => ({ ok: false, kind: "unusable", error: failedPrecondition(`idp intent ${id} ${why}`) });
  if (row.state === "consumed") return refuse("was used already");
  if (row.state !== "succeeded" || row.external_user_id === null) return refuse("has not succeeded");
  if (row.expires_at.getTime() <= Date.now()) return refuse("has expired");
  return { ok: true, row: row as IdpIntentRow & { external_user_id: string } };
}

/** A session check used the intent: nothing can use it again. */
export async function consumeIdpIntent(tx: Tx, actor: Actor, row: IdpIntentRow, sessionId: string): Promise<ObjectDetails> {
  const appended = await changeIntent(tx, row, { type: "idp_intent.consumed", payload: { sessionId } }, actor, { state: "consumed", raw_information: null });
  return instanceOwnedDetails({ ...row, sequence: appended.sequence, change_date: appended.createdAt });
}

function changeIntent(tx: Tx, row: IdpIntentRow, event: PendingEvent, editor: Editor, set: Updateable<IdpIntentTable>): Promise<Appended> {
  const aggregate = { instanceId: row.instance_id, type: AGGREGATE, id: row.id, orgId: row.org_id };
  return appendAndProject(tx, aggregate, row.sequence, [event], editor, { table: "idp_intents", key: { instance_id: row.instance_id, id: row.id }, set });
}
