import { sql } from "kysely";
import type { Db, Tx } from "../../store/db.js";
import type { UserRow } from "../../store/schema.js";
import { failedPrecondition, invalidArgument, permissionDenied } from "../errors.js";
import { userSchemaRowForUpdate } from "./commands.js";
import type { SearchValues } from "./search-index.js";
import { mergePatch, searchableFields, searchableValues, unwritableChanges, type JsonObject, type Party } from "./fields.js";
import { requireValidData } from "./json-schema.js";
import type { Authenticator, UserSchemaRow } from "./model.js";

/** A schema user's data as stored: the schema, the revision it last met, the data and what of it is indexed. */
export interface SchemaUserData {
  schemaId: string;
  revision: number;
  data: JsonObject;
  searchValues: SearchValues;
}

function meets(schema: UserSchemaRow, data: JsonObject): void {
  requireValidData(`${schema.instance_id}/${schema.id}/${schema.revision}`, schema.schema, data, `user schema "${schema.type}" (revision ${schema.revision})`);
}

function requireWritable(schema: UserSchemaRow, before: JsonObject, after: JsonObject, party: Party): void {
  const refused = unwritableChanges(schema.schema, before, after, party);
  if (refused.length > 0) {
    const who = party === "self" ? "you may not change" : "the schema does not let owners write";
    throw permissionDenied(`${who} ${refused.join(", ")} (the schema's "urn:platform:permission")`);
  }
}

/**
 * A new user's data: its schema active, locked for share (a DeleteUserSchema waits for this
 * transaction and counts the user), the data valid against the current revision and every
 * field of it one that owners may write.
 */
export async function newSchemaUserData(tx: Tx, instanceId: string, schemaId: string, data: JsonObject): Promise<SchemaUserData> {
  const schema = await userSchemaRowForUpdate(tx, instanceId, schemaId, "share");
  if (schema.state !== "active") throw failedPrecondition(`user schema ${schemaId} is deactivated: no users are created with it`);
  requireWritable(schema, {}, data, "owner");
  meets(schema, data);
  return { schemaId, revision: schema.revision, data, searchValues: searchableValues(schema.schema, data) };
}

/**
 * A user's data after a JSON merge patch (RFC 7386), valid against the schema's current
 * revision (the user moves to it), changing only fields `party` may write; undefined when
 * the patch changes nothing.
 */
export async function patchedSchemaUserData(tx: Tx, user: UserRow, patch: JsonObject, party: Party): Promise<SchemaUserData | undefined> {
  if (user.type !== "schema" || user.schema_id === null) throw failedPrecondition(`user ${user.id} is a ${user.type} user: it has no schema data`);
  const schema = await userSchemaRowForUpdate(tx, user.instance_id, user.schema_id, "share");
  const before = (user.data ?? {}) as JsonObject;
  const after = mergePatch(before, patch) as JsonObject;
  requireWritable(schema, before, after, party);
  if (JSON.stringify(after) === JSON.stringify(before) && user.schema_revision === schema.revision) return undefined;
  meets(schema, after);
  return { schemaId: schema.id, revision: schema.revision, data: after, searchValues: searchableValues(schema.schema, after) };
}

/** Data filters name fields some schema of the instance (or the one asked for) indexes; InvalidArgument otherwise. */
export async function requireSearchableFields(db: Db, instanceId: string, fields: string[], schemaIds: string[]): Promise<void> {
  if (fields.length === 0) return;
  let query = db.selectFrom("user_schemas").select("schema").where("instance_id", "=", instanceId);
  if (schemaIds.length > 0) query = query.where("id", "in", schemaIds);
  const searchable = new Set((await query.execute()).flatMap((s) => searchableFields(s.schema)));
  const field = fields.find((f) => !searchable.has(f));
  if (field !== undefined) {
    throw invalidArgument(
      `${field} is not a searchable field of ${schemaIds.length > 0 ? "the user schema" : "any user schema"}: mark it "urn:platform:searchable": true`,
    );
  }
}

/** How the user's schema lets its users authenticate (nothing without a schema). */
export async function allowedAuthenticators(db: Db | Tx, user: Pick<UserRow, "instance_id" | "schema_id">): Promise<ReadonlySet<Authenticator>> {
  if (user.schema_id === null) return new Set();
  const row = await db
    .selectFrom("user_schemas")
    .select("possible_authenticators")
    .where("instance_id", "=", user.instance_id)
    .where("id", "=", user.schema_id)
    .executeTakeFirst();
  return new Set((row?.possible_authenticators ?? []) as Authenticator[]);
}

/**
 * The condition, in a query of `users as u`, that the user's schema allows the authenticator:
 * what a sign-in by a stored credential (a token, a key) checks at each use, so that a schema
 * dropping it stops the credentials made before.
 */
export const userSchemaAllowsSql = (authenticator: Authenticator) =>
  sql<boolean>`exists (select 1 from user_schemas us where us.instance_id = u.instance_id and us.id = u.schema_id and us.possible_authenticators @> ${JSON.stringify([authenticator])}::jsonb)`;

/** Whether the user's schema lets its users authenticate so; people and service accounts are not asked here. */
export async function schemaAllows(db: Db | Tx, user: Pick<UserRow, "instance_id" | "schema_id">, authenticator: Authenticator): Promise<boolean> {
  return (await allowedAuthenticators(db, user)).has(authenticator);
}

const AUTHENTICATOR_NAMES: Record<Authenticator, string> = {
  username: "a username",
  password: "a password",
  webauthn: "passkeys and security keys",
  totp: "an authenticator app (TOTP)",
  otp_email: "one-time codes by email",
  otp_sms: "one-time codes by SMS",
  pat: "personal access tokens",
  key: "keys",
};

/** FailedPrecondition unless the schema user's schema allows the authenticator. */
export async function requireSchemaAllows(db: Db | Tx, user: Pick<UserRow, "id" | "instance_id" | "schema_id">, authenticator: Authenticator): Promise<void> {
  if (!(await schemaAllows(db, user, authenticator))) {
    throw failedPrecondition(`user ${user.id}'s schema does not allow ${AUTHENTICATOR_NAMES[authenticator]} (its possibleAuthenticators)`);
  }
}
