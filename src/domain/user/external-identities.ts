import { sql } from "kysely";
import type { Db, Tx } from "../../store/db.js";
import { searchPage, type Page } from "../../store/search.js";
import type { Actor, ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition, notFound } from "../errors.js";
import { changeUser, userRowForUpdate } from "./commands.js";

/** An account at an identity provider, as the login learned it from the provider. */
export interface ExternalAccount {
  idpId: string;
  /** The provider's stable id of the account (`sub`, or the OAuth id attribute). */
  externalUserId: string;
  username: string;
  email: string;
}

export interface LinkedUser {
  userId: string;
  orgId: string;
  state: "active" | "inactive" | "locked";
  /** False when the user's organization is deactivated: nobody of it signs in. */
  orgActive: boolean;
}

/** The user an external account is linked to in an instance, if any. */
export async function linkedUser(db: Db, instanceId: string, idpId: string, externalUserId: string): Promise<LinkedUser | undefined> {
  const row = await db
    .selectFrom("external_identities as e")
    .innerJoin("users as u", (j) => j.onRef("u.instance_id", "=", "e.instance_id").onRef("u.id", "=", "e.user_id"))
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "u.instance_id").onRef("o.id", "=", "u.org_id"))
    .select(["u.id", "u.org_id", "u.state", "o.state as org_state"])
    .where("e.instance_id", "=", instanceId)
    .where("e.idp_id", "=", idpId)
    .where("e.external_user_id", "=", externalUserId)
    .executeTakeFirst();
  return row && { userId: row.id, orgId: row.org_id, state: row.state, orgActive: row.org_state === "active" };
}

/**
 * Links an external account to a user (event `user.idp.link.added` on the user). The user's
 * row lock orders it with the user's removal; the table's keys refuse a second user for the
 * account and a second account of the same provider for the user.
 */
export async function linkExternalAccount(tx: Tx, actor: Actor, userId: string, account: ExternalAccount): Promise<ObjectDetails> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  if (user.type !== "human") throw failedPrecondition(`user ${userId} is a ${user.type} user: only people sign in with an identity provider`);
  const taken = await tx
    .selectFrom("external_identities")
    .select(["user_id", "external_user_id"])
    .where("instance_id", "=", actor.instanceId)
    .where("idp_id", "=", account.idpId)
    .where((eb) => eb.or([eb("external_user_id", "=", account.externalUserId), eb("user_id", "=", userId)]))
    .execute();
  if (taken.some((t) => t.external_user_id === account.externalUserId)) throw alreadyExists("this external account is linked to a user already");
  if (taken.length > 0) throw alreadyExists(`user ${userId} is linked to another account of this identity provider`);
  const details = await changeUser(
    tx,
    actor,
    user,
    [{ type: "user.idp.link.added", payload: { idpId: account.idpId, externalUserId: account.externalUserId, externalUsername: account.username } }],
    {},
  );
  await tx
    .insertInto("external_identities")
    .values({
      instance_id: actor.instanceId,
      idp_id: account.idpId,
      external_user_id: account.externalUserId,
      user_id: userId,
      external_username: account.username,
      external_email: account.email,
      created_at: details.changeDate,
      change_date: details.changeDate,
    })
    .execute();
  return details;
}

/**
 * Removes a user's link to an external account (event `user.idp.link.removed` on the user):
 * the next login with that account finds no user, as for an account never linked.
 */
export async function unlinkExternalAccount(tx: Tx, actor: Actor, userId: string, idpId: string, externalUserId: string): Promise<ObjectDetails> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  const removed = await tx
    .deleteFrom("external_identities")
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("idp_id", "=", idpId)
    .where("external_user_id", "=", externalUserId)
    .executeTakeFirst();
  if (removed.numDeletedRows === 0n) throw notFound(`user ${userId} has no link to the account ${externalUserId} of identity provider ${idpId}`);
  return changeUser(tx, actor, user, [{ type: "user.idp.link.removed", payload: { idpId, externalUserId } }], {});
}

interface LinkView {
  idpId: string;
  idpName: string;
  externalUserId: string;
  externalUserName: string;
  /** A link never changes; its one event, its creation, is an event of the user. */
  details: ObjectDetails;
}

/** A user's links with their providers' names, newest first unless asked otherwise. */
export async function searchExternalAccounts(db: Db, instanceId: string, user: { id: string; orgId: string }, page: Page) {
  const query = db.selectFrom("external_identities").where("instance_id", "=", instanceId).where("user_id", "=", user.id);
  const found = await searchPage(db, "user", instanceId, query, (q, direction) => q.orderBy("created_at", direction).orderBy("idp_id", direction), page);
  const ids = found.rows.map((r) => r.idp_id);
  // Links go with their provider (domain/idp/commands.ts): each has its row here, a system provider's under instance "".
  const idps =
    ids.length === 0 ? [] : await db.selectFrom("idps").select(["id", "name"]).where("instance_id", "in", ["", instanceId]).where("id", "in", ids).execute();
  const names = new Map(idps.map((i) => [i.id, i.name]));
  const rows: LinkView[] = found.rows.map((r) => ({
    idpId: r.idp_id,
    idpName: names.get(r.idp_id) ?? "",
    externalUserId: r.external_user_id,
    externalUserName: r.external_username,
    details: { id: "", sequence: 0, changeDate: r.created_at, owner: { type: "org", id: user.orgId } },
  }));
  return { ...found, rows };
}

/** Keeps the link's copy of the provider's username and email current (no event: they are the provider's). */
export async function refreshExternalAccount(db: Db, instanceId: string, account: ExternalAccount): Promise<void> {
  await db
    .updateTable("external_identities")
    .set({ external_username: account.username, external_email: account.email, change_date: new Date() })
    .where("instance_id", "=", instanceId)
    .where("idp_id", "=", account.idpId)
    .where("external_user_id", "=", account.externalUserId)
    .where((eb) => eb.or([eb("external_username", "!=", account.username), eb("external_email", "!=", account.email)]))
    .execute();
}

/**
 * The active human users (of active organizations; of `orgId` when given) whose verified
 * email is `email`, at most two: auto linking proposes a user only when exactly one matches.
 */
export async function usersWithVerifiedEmail(db: Db, instanceId: string, email: string, orgId: string | undefined): Promise<string[]> {
  const rows = await db
    .selectFrom("users as u")
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "u.instance_id").onRef("o.id", "=", "u.org_id"))
    .select("u.id")
    .where("u.instance_id", "=", instanceId)
    .where("u.type", "=", "human")
    .where("u.state", "=", "active")
    .where("o.state", "=", "active")
    .where("u.email_verified", "=", true)
    .where(sql<string>`lower(u.email)`, "=", email.trim().toLowerCase())
    .$if(orgId !== undefined, (q) => q.where("u.org_id", "=", orgId!))
    .limit(2)
    .execute();
  return rows.map((r) => r.id);
}

/** Whether the user is linked to an account of the provider already. */
export async function hasLinkTo(db: Db, instanceId: string, userId: string, idpId: string): Promise<boolean> {
  const row = await db
    .selectFrom("external_identities")
    .select("user_id")
    .where("instance_id", "=", instanceId)
    .where("user_id", "=", userId)
    .where("idp_id", "=", idpId)
    .executeTakeFirst();
  return row !== undefined;
}
