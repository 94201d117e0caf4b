import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import { instanceOwnedDetails, type Actor, type ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition, notFound } from "../errors.js";
import { searchableFields } from "./fields.js";
import { checkSchema } from "./json-schema.js";
import { reindexSchemaUsers } from "./search-index.js";
import { AGGREGATE, type Authenticator, type UserSchemaRow, type UserSchemaState } from "./model.js";

export interface UserSchemaSpec {
  type: string;
  schema: Record<string, unknown>;
  possibleAuthenticators: Authenticator[];
}

async function ensureTypeFree(tx: Tx, instanceId: string, type: string, except?: string): Promise<void> {
  let query = tx
    .selectFrom("user_schemas")
    .select("id")
    .where("instance_id", "=", instanceId)
    .where((eb) => eb(eb.fn("lower", [eb.ref("type")]), "=", type.toLowerCase()));
  if (except) query = query.where("id", "!=", except);
  const taken = await query.executeTakeFirst();
  if (taken) throw alreadyExists(`a user schema of type "${type}" exists already (${taken.id})`);
}

/** Creates an active schema at revision 1, after checking its JSON Schema (json-schema.ts). */
export async function addUserSchema(tx: Tx, actor: Actor, spec: UserSchemaSpec): Promise<ObjectDetails> {
  checkSchema(spec.schema);
  await ensureTypeFree(tx, actor.instanceId, spec.type);
  const id = newId();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: "" },
    0,
    [{ type: "user_schema.added", payload: { type: spec.type, schema: spec.schema, possibleAuthenticators: spec.possibleAuthenticators } }],
    actor,
  );
  const row = {
    instance_id: actor.instanceId,
    id,
    type: spec.type,
    revision: 1,
    schema: JSON.stringify(spec.schema),
    possible_authenticators: JSON.stringify(spec.possibleAuthenticators),
    ...createdBy(appended),
  };
  await tx.insertInto("user_schemas").values(row).execute();
  return instanceOwnedDetails(row);
}

/** The schema row, locked: for update to change it, for share to write one of its users (its removal then waits). */
export async function userSchemaRowForUpdate(tx: Tx, instanceId: string, id: string, mode: "update" | "share" = "update"): Promise<UserSchemaRow> {
  const query = tx.selectFrom("user_schemas").selectAll().where("instance_id", "=", instanceId).where("id", "=", id);
  const row = await (mode === "update" ? query.forUpdate() : query.forShare()).executeTakeFirst();
  if (!row) throw notFound(`user schema ${id} not found`);
  return row;
}

/** JSON values compare equal when they serialize equally with their keys sorted. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/**
 * Changes what is given; the same values again change nothing. A changed JSON Schema raises
 * the revision: users keep theirs and meet the new one at their next write.
 */
export async function patchUserSchema(tx: Tx, actor: Actor, id: string, patch: Partial<UserSchemaSpec>): Promise<ObjectDetails> {
  const current = await userSchemaRowForUpdate(tx, actor.instanceId, id);
  const changed: Partial<UserSchemaSpec> = {};
  if (patch.type !== undefined && patch.type !== current.type) changed.type = patch.type;
  if (patch.schema !== undefined && canonical(patch.schema) !== canonical(current.schema)) changed.schema = patch.schema;
  if (
    patch.possibleAuthenticators !== undefined &&
    canonical([...patch.possibleAuthenticators].sort()) !== canonical([...current.possible_authenticators].sort())
  )
    changed.possibleAuthenticators = patch.possibleAuthenticators;
  if (Object.keys(changed).length === 0) return instanceOwnedDetails(current);
  if (changed.schema) checkSchema(changed.schema);
  if (changed.type !== undefined && changed.type.toLowerCase() !== current.type.toLowerCase()) await ensureTypeFree(tx, actor.instanceId, changed.type, id);
  const revision = changed.schema ? current.revision + 1 : current.revision;
  if (changed.schema && canonical(searchableFields(changed.schema)) !== canonical(searchableFields(current.schema))) {
    await reindexSchemaUsers(tx, actor.instanceId, id, changed.schema);
  }
  const appended = await appendAndProject(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: "" },
    current.sequence,
    [{ type: "user_schema.changed", payload: { ...changed, ...(changed.schema && { revision }) } }],
    actor,
    {
      table: "user_schemas",
      key: { instance_id: actor.instanceId, id },
      set: {
        ...(changed.type !== undefined && { type: changed.type }),
        ...(changed.schema && { schema: JSON.stringify(changed.schema), revision }),
        ...(changed.possibleAuthenticators && { possible_authenticators: JSON.stringify(changed.possibleAuthenticators) }),
      },
    },
  );
  return instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

export async function setUserSchemaState(tx: Tx, actor: Actor, id: string, state: UserSchemaState): Promise<ObjectDetails> {
  const current = await userSchemaRowForUpdate(tx, actor.instanceId, id);
  if (current.state === state) throw failedPrecondition(`user schema ${id} is already ${state === "active" ? "active" : "deactivated"}`);
  const appended = await appendAndProject(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: "" },
    current.sequence,
    [{ type: state === "active" ? "user_schema.activated" : "user_schema.deactivated", payload: {} }],
    actor,
    { table: "user_schemas", key: { instance_id: actor.instanceId, id }, set: { state } },
  );
  return instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/**
 * Removes a schema no user uses; FailedPrecondition naming how many do. The schema is locked
 * for update: a user being created with it (holding a share lock) is counted.
 */
export async function removeUserSchema(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  const current = await userSchemaRowForUpdate(tx, actor.instanceId, id);
  const { count } = await tx
    .selectFrom("users")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("instance_id", "=", actor.instanceId)
    .where("schema_id", "=", id)
    .executeTakeFirstOrThrow();
  const users = Number(count);
  if (users > 0)
    throw failedPrecondition(`user schema ${id} is used by ${users} user${users === 1 ? "" : "s"}; delete them or move them to another schema first`);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: "" },
    current.sequence,
    [{ type: "user_schema.removed", payload: { type: current.type } }],
    actor,
  );
  await tx.deleteFrom("user_schemas").where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  return instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}
