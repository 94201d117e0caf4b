import { appendAndProject, appendEvents, appendToEach, createdBy } from "../../store/append.js";
import type { Db, Tx } from "../../store/db.js";
import type { PendingEvent } from "../../store/events.js";
import { deferStatement } from "../../store/deferred.js";
import { newId } from "../../store/ids.js";
import { AGGREGATE, userDetails, type UserPatch, type UserSpec, type UserState } from "./model.js";
import type { UserRow, UserUpdate } from "../../store/schema.js";
import type { Actor, ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition, notFound, permissionDenied } from "../errors.js";
import type { Party } from "../user-schema/fields.js";
import { storeSearchValues } from "../user-schema/search-index.js";
import { newSchemaUserData, patchedSchemaUserData, requireSchemaAllows } from "../user-schema/users.js";
import { requireExisting } from "../existence.js";

/**
 * Creates a user in an organization. Passwords arrive hashed: hashing is slow on purpose
 * and runs before the transaction, so that no connection waits for it. Event payloads
 * never carry a hash.
 */
export async function addUser(tx: Tx, actor: Actor, orgId: string, spec: UserSpec): Promise<{ id: string; details: ObjectDetails }> {
  await requireExisting(tx, "orgs", actor.instanceId, orgId);
  await ensureUsernameFree(tx, actor.instanceId, orgId, spec.username);
  const id = newId();
  const { type } = spec;
  const schemaData = type.kind === "schema" ? await newSchemaUserData(tx, actor.instanceId, type.schemaId, type.data) : undefined;
  const payload =
    type.kind === "human"
      ? { orgId, username: spec.username, profile: type.profile, email: type.email, phone: type.phone, hasPassword: type.passwordHash !== undefined }
      : type.kind === "machine"
        ? { orgId, username: spec.username, name: type.name, description: type.description, accessTokenType: type.accessTokenType }
        : { orgId, username: spec.username, schemaId: schemaData!.schemaId, revision: schemaData!.revision, data: schemaData!.data };
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId },
    0,
    [{ type: `user.${type.kind}.added`, payload }],
    actor,
  );
  const row = {
    instance_id: actor.instanceId,
    id,
    org_id: orgId,
    username: spec.username,
    type: type.kind,
    ...createdBy(appended),
    ...(type.kind === "human"
      ? {
          name: type.profile.displayName,
          given_name: type.profile.givenName,
          family_name: type.profile.familyName,
          nick_name: type.profile.nickName,
          preferred_language: type.profile.preferredLanguage,
          gender: type.profile.gender ?? null,
          email: type.email.address,
          email_verified: type.email.verified,
          phone: type.phone?.number ?? null,
          phone_verified: type.phone?.verified ?? null,
        }
      : type.kind === "machine"
        ? { name: type.name, description: type.description, access_token_type: type.accessTokenType }
        : // A schema user has no name of its own: lists show its username.
          { name: spec.username, schema_id: schemaData!.schemaId, schema_revision: schemaData!.revision, data: JSON.stringify(schemaData!.data) }),
  };
  // Nothing reads these inserts' answers: they go to the server with the transaction's next
  // statement or its commit (store/deferred.ts), a username taken meanwhile failing that one.
  await deferStatement(tx, tx.insertInto("users").values(row));
  if (schemaData) await storeSearchValues(tx, actor.instanceId, id, schemaData.searchValues, true);
  if (type.kind === "human" && type.passwordHash !== undefined) {
    await deferStatement(
      tx,
      tx.insertInto("user_secrets").values({
        instance_id: actor.instanceId,
        user_id: id,
        kind: "password",
        hash: type.passwordHash,
        change_required: type.passwordChangeRequired,
        changed_at: appended.createdAt,
      }),
    );
  }
  return { id, details: userDetails(row) };
}

/** The bootstrap's administrator and test fixtures: a service account with a bearer token type. */
export function addMachineUser(tx: Tx, actor: Actor, input: { orgId: string; username: string; name: string }) {
  return addUser(tx, actor, input.orgId, { username: input.username, type: { kind: "machine", name: input.name, description: "", accessTokenType: "bearer" } });
}

/**
 * A patch that changes nothing succeeds without an event. `party` "self": a user changing
 * itself, which only a schema user may, and only in its data's fields its schema lets it write.
 */
export async function patchUser(tx: Tx, actor: Actor, id: string, patch: UserPatch, party: Party = "owner"): Promise<ObjectDetails> {
  const current = await userRowForUpdate(tx, actor.instanceId, id);
  if (party === "self" && (patch.username !== undefined || patch.human || patch.machine)) throw permissionDenied("you may change only your schema data");
  if (patch.human && current.type !== "human") throw failedPrecondition(`user ${id} is a ${current.type} user: it has no human properties`);
  if (patch.machine && current.type !== "machine") throw failedPrecondition(`user ${id} is a ${current.type} user: it has no machine properties`);
  const schemaData = patch.schema ? await patchedSchemaUserData(tx, current, patch.schema.data, party) : undefined;
  const set: UserUpdate = {};
  const changed = <K extends keyof UserUpdate>(column: K, value: UserUpdate[K] | undefined) => {
    if (value !== undefined && value !== current[column as keyof UserRow]) set[column] = value;
  };
  changed("username", patch.username);
  const h = patch.human;
  if (h) {
    changed("given_name", h.givenName);
    changed("family_name", h.familyName);
    changed("name", h.displayName);
    changed("nick_name", h.nickName);
    changed("preferred_language", h.preferredLanguage);
    if ("gender" in h) changed("gender", h.gender ?? null);
    changed("email", h.email?.address);
    changed("email_verified", h.email?.verified);
    if (h.removePhone) {
      changed("phone", null);
      changed("phone_verified", null);
    } else {
      changed("phone", h.phone?.number);
      changed("phone_verified", h.phone?.verified);
    }
  }
  const m = patch.machine;
  if (m) {
    changed("name", m.name);
    changed("description", m.description);
    changed("access_token_type", m.accessTokenType);
  }
  if (set.username !== undefined && current.type === "schema") set.name = set.username;
  const events: PendingEvent[] = [];
  if (Object.keys(set).length > 0) events.push({ type: "user.changed", payload: { ...set } });
  if (schemaData) {
    events.push({ type: "user.data.changed", payload: { schemaId: schemaData.schemaId, revision: schemaData.revision, data: schemaData.data } });
    set.schema_revision = schemaData.revision;
    set.data = JSON.stringify(schemaData.data);
    await storeSearchValues(tx, actor.instanceId, id, schemaData.searchValues);
  }
  if (events.length === 0) return userDetails(current);
  if (set.username !== undefined && set.username.toLowerCase() !== current.username.toLowerCase()) {
    await ensureUsernameFree(tx, actor.instanceId, current.org_id, set.username);
  }
  return changeUser(tx, actor, current, events, set);
}

const TRANSITIONS: Record<"lock" | "unlock" | "deactivate" | "reactivate", { from: UserState[]; to: UserState; event: string }> = {
  lock: { from: ["active"], to: "locked", event: "user.locked" },
  unlock: { from: ["locked"], to: "active", event: "user.unlocked" },
  deactivate: { from: ["active", "locked"], to: "inactive", event: "user.deactivated" },
  reactivate: { from: ["inactive"], to: "active", event: "user.reactivated" },
};

export async function changeUserState(tx: Tx, actor: Actor, id: string, action: keyof typeof TRANSITIONS): Promise<ObjectDetails> {
  const current = await userRowForUpdate(tx, actor.instanceId, id);
  const transition = TRANSITIONS[action];
  if (!transition.from.includes(current.state))
    throw failedPrecondition(`user ${id} is ${current.state}: it cannot be ${action === "lock" ? "locked" : `${action}d`}`);
  return changeUser(tx, actor, current, [{ type: transition.event, payload: {} }], { state: transition.to });
}

export async function removeUser(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  const current = await userRowForUpdate(tx, actor.instanceId, id);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: current.org_id },
    current.sequence,
    [{ type: "user.removed", payload: { username: current.username } }],
    actor,
  );
  await removeUsersWhere(tx, actor.instanceId, "id", id);
  return userDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/**
 * Stores a password hash. `expected` is the hash a current-password check verified
 * (outside the transaction, as hashing is slow): when it changed meanwhile, the check
 * no longer holds and the change is refused.
 */
export async function storePassword(
  tx: Tx,
  actor: Actor,
  id: string,
  input: { hash: string; changeRequired: boolean; expected?: string | undefined },
): Promise<ObjectDetails> {
  const current = await userRowForUpdate(tx, actor.instanceId, id);
  if (current.type === "machine") throw failedPrecondition(`user ${id} is a machine user: it has no password`);
  if (current.type === "schema") await requireSchemaAllows(tx, current, "password");
  if (input.expected !== undefined && (await passwordHash(tx, actor.instanceId, id)) !== input.expected) {
    throw failedPrecondition("the password was changed meanwhile; try again");
  }
  const details = await changeUser(tx, actor, current, [{ type: "user.password.changed", payload: { changeRequired: input.changeRequired } }], {});
  await upsertSecret(tx, actor.instanceId, id, "password", input.hash, input.changeRequired, details.changeDate);
  return details;
}

async function passwordHash(db: Db, instanceId: string, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("user_secrets")
    .select("hash")
    .where("instance_id", "=", instanceId)
    .where("user_id", "=", userId)
    .where("kind", "=", "password")
    .executeTakeFirst();
  return row?.hash;
}

/** A machine user's client secret (its SHA-256: the secret is random, see crypto/tokens.ts). */
export async function setClientSecret(tx: Tx, actor: Actor, id: string, hash: string | undefined): Promise<ObjectDetails> {
  const current = await userRowForUpdate(tx, actor.instanceId, id);
  if (current.type !== "machine") throw failedPrecondition(`user ${id} is a human user: client secrets belong to machine users`);
  if (hash === undefined) {
    const removed = await tx
      .deleteFrom("user_secrets")
      .where("instance_id", "=", actor.instanceId)
      .where("user_id", "=", id)
      .where("kind", "=", "client_secret")
      .executeTakeFirst();
    if (removed.numDeletedRows === 0n) throw failedPrecondition(`user ${id} has no client secret`);
    return changeUser(tx, actor, current, [{ type: "user.secret.removed", payload: {} }], {});
  }
  const details = await changeUser(tx, actor, current, [{ type: "user.secret.set", payload: {} }], {});
  await upsertSecret(tx, actor.instanceId, id, "client_secret", hash, false, details.changeDate);
  return details;
}

async function upsertSecret(tx: Tx, instanceId: string, userId: string, kind: "password" | "client_secret", hash: string, changeRequired: boolean, at: Date) {
  await tx
    .insertInto("user_secrets")
    .values({ instance_id: instanceId, user_id: userId, kind, hash, change_required: changeRequired, changed_at: at })
    .onConflict((oc) => oc.columns(["instance_id", "user_id", "kind"]).doUpdateSet({ hash, change_required: changeRequired, changed_at: at }))
    .execute();
}

export async function changeUser(tx: Tx, actor: Actor, current: UserRow, events: PendingEvent[], set: UserUpdate): Promise<ObjectDetails> {
  const aggregate = { instanceId: actor.instanceId, type: AGGREGATE, id: current.id, orgId: current.org_id };
  const appended = await appendAndProject(tx, aggregate, current.sequence, events, actor, {
    table: "users",
    key: { instance_id: actor.instanceId, id: current.id },
    set,
  });
  return userDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/** Locks the user's row: every change of it and of its credentials is serialized here. */
export async function userRowForUpdate(tx: Tx, instanceId: string, id: string): Promise<UserRow> {
  const row = await tx.selectFrom("users").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).forUpdate().executeTakeFirst();
  if (!row) throw notFound(`user ${id} not found`);
  return row;
}

/**
 * Usernames are unique in the instance, and one that ends with `@<domain>` may not name a
 * domain of another organization: it would read as the login name of that organization's
 * user of that name (as ZITADEL refuses it, "domain not allowed as username").
 */
async function ensureUsernameFree(tx: Tx, instanceId: string, orgId: string, username: string): Promise<void> {
  const taken = await tx
    .selectFrom("users")
    .select("id")
    .where("instance_id", "=", instanceId)
    .where((eb) => eb(eb.fn("lower", [eb.ref("username")]), "=", eb.fn("lower", [eb.val(username)])))
    .executeTakeFirst();
  if (taken) throw alreadyExists(`the username ${username} is taken`);
  const at = username.lastIndexOf("@");
  if (at < 0) return;
  const domain = username.slice(at + 1).toLowerCase();
  const claimed = await tx
    .selectFrom("org_domains")
    .select("org_id")
    .where("instance_id", "=", instanceId)
    .where((eb) => eb(eb.fn("lower", [eb.ref("domain")]), "=", domain))
    .where("org_id", "!=", orgId)
    .executeTakeFirst();
  if (claimed) throw failedPrecondition(`the username must not end with @${domain}: that is a domain of another organization`);
}

/**
 * Removes users with everything that hangs off them: their memberships anywhere and their
 * credentials. Nothing may dangle, so every table that refers to users is named here.
 */
async function removeUsersWhere(tx: Tx, instanceId: string, column: "org_id" | "id", value: string): Promise<void> {
  const users = tx.selectFrom("users").select("id").where("instance_id", "=", instanceId).where(column, "=", value);
  // Locked first: whoever is adding a membership or credential to one of them (holding a
  // share lock) finishes before, and is removed with it; whoever comes later finds no user.
  await users.forUpdate().execute();
  for (const table of [
    "personal_access_tokens",
    "user_keys",
    "user_secrets",
    "user_metadata",
    "memberships",
    "user_grants",
    "external_identities",
    "user_codes",
    "user_factors",
    "user_recovery_codes",
    "sessions",
    "user_webauthn_keys",
    "user_search_values",
  ] as const) {
    await tx.deleteFrom(table).where("instance_id", "=", instanceId).where("user_id", "in", users).execute();
  }
  // Their messages stay in the log, but what waits is not sent to nobody.
  await tx
    .updateTable("notifications")
    .set({ status: "failed", sealed_data: null, last_error: "the user was removed", claim_id: null, claimed_until: null })
    .where("instance_id", "=", instanceId)
    .where("user_id", "in", users)
    .where("status", "=", "pending")
    .execute();
  await tx.deleteFrom("users").where("instance_id", "=", instanceId).where(column, "=", value).execute();
}

/**
 * Removes an organization's users as removeUsersWhere does, each with its own user.removed
 * event in this transaction, so that event executions on user.removed hear of every user
 * removed with its organization, as of one removed alone.
 */
export async function removeOrgUsers(tx: Tx, actor: Actor, orgId: string): Promise<void> {
  const users = await tx
    .selectFrom("users")
    .select(["id", "sequence", "username"])
    .where("instance_id", "=", actor.instanceId)
    .where("org_id", "=", orgId)
    .forUpdate()
    .execute();
  const events = users.map((u) => ({ id: u.id, orgId, previousSequence: u.sequence, event: { type: "user.removed", payload: { username: u.username } } }));
  await appendToEach(tx, actor.instanceId, AGGREGATE, events, actor);
  await removeUsersWhere(tx, actor.instanceId, "org_id", orgId);
}
