import { sql, type ExpressionBuilder, type SelectQueryBuilder } from "kysely";
import type { Db, Tx } from "../../store/db.js";
import { AGGREGATE, type UserKind, type UserState, userView, type UserView } from "./model.js";
import type { Database, UserRow } from "../../store/schema.js";
import { prepared } from "../../store/prepared.js";
import { searchPage, textMatches, type Page, type TextMatch } from "../../store/search.js";
import { notFound } from "../errors.js";
import type { Party } from "../user-schema/fields.js";
import { requireSearchableFields } from "../user-schema/users.js";

type UserQuery = SelectQueryBuilder<Database, "users", object>;

/** Users with what their views need besides their own row: login domain and credential flags, never a hash. */
function withViewColumns(query: UserQuery) {
  return query.selectAll("users").select((eb) => [
    eb
      .selectFrom("org_domains as d")
      .select("d.domain")
      .whereRef("d.instance_id", "=", "users.instance_id")
      .whereRef("d.org_id", "=", "users.org_id")
      .where("d.is_primary", "=", true)
      .as("primary_domain"),
    eb
      .selectFrom("user_secrets as p")
      .select("p.changed_at")
      .whereRef("p.instance_id", "=", "users.instance_id")
      .whereRef("p.user_id", "=", "users.id")
      .where("p.kind", "=", "password")
      .as("password_changed_at"),
    eb
      .selectFrom("user_secrets as p")
      .select("p.change_required")
      .whereRef("p.instance_id", "=", "users.instance_id")
      .whereRef("p.user_id", "=", "users.id")
      .where("p.kind", "=", "password")
      .as("password_change_required"),
    eb
      .exists(
        eb
          .selectFrom("user_secrets as s")
          .select("s.kind")
          .whereRef("s.instance_id", "=", "users.instance_id")
          .whereRef("s.user_id", "=", "users.id")
          .where("s.kind", "=", "client_secret"),
      )
      .$castTo<boolean>()
      .as("has_secret"),
    eb
      .selectFrom("user_schemas as us")
      .select("us.schema")
      .whereRef("us.instance_id", "=", "users.instance_id")
      .whereRef("us.id", "=", "users.schema_id")
      .as("user_schema"),
  ]);
}

const userById = prepared((db, p: { instanceId: string; id: string }) =>
  withViewColumns(db.selectFrom("users").where("users.instance_id", "=", p.instanceId).where("users.id", "=", p.id)),
);

/** `reader`: "self" when the user reads itself without the permission (a schema user then sees only what its schema lets it read). */
export async function getUser(db: Db, instanceId: string, id: string, reader: Party = "owner"): Promise<UserView> {
  const [row] = await userById(db, { instanceId, id });
  if (!row) throw notFound(`user ${id} not found`);
  return userView(row, reader);
}

/** The user's row as stored, if there is one. */
export function findUserRow(db: Db | Tx, instanceId: string, id: string): Promise<UserRow | undefined> {
  return db.selectFrom("users").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
}

/** The user's row as stored; NotFound when there is none. */
export async function getUserRow(db: Db, instanceId: string, id: string): Promise<UserRow> {
  const row = await findUserRow(db, instanceId, id);
  if (!row) throw notFound(`user ${id} not found`);
  return row;
}

type Text = { value: string; match: TextMatch };
export type UserFilter =
  | { ids: string[] }
  | { username: Text }
  | { loginName: Text }
  | { email: Text }
  | { displayName: Text }
  | { orgId: string }
  | { type: UserKind }
  | { state: UserState }
  | { schemaId: string }
  | { data: { field: string } & Text };

export type UserSortColumn = "id" | "created_at" | "change_date" | "username" | "name" | "email" | "state" | "type";

export interface UserSearch {
  filters: UserFilter[];
  sort: UserSortColumn;
  page: Page;
  /** Only users of these organizations (an organization context, or what the caller may read); undefined: all. */
  within?: ReadonlySet<string>;
}

/** The login name as SQL: username@<primary domain of the user's organization>. */
const loginName = sql<string>`users.username || '@' || coalesce((select d.domain from org_domains d where d.instance_id = users.instance_id and d.org_id = users.org_id and d.is_primary), '')`;

function matches(eb: ExpressionBuilder<Database, "users">, filter: UserFilter) {
  if ("ids" in filter) return eb("users.id", "=", eb.fn.any(eb.val(filter.ids)));
  if ("username" in filter) return textMatches(eb, eb.ref("users.username"), filter.username.match, filter.username.value);
  if ("loginName" in filter) return textMatches(eb, loginName, filter.loginName.match, filter.loginName.value);
  if ("email" in filter) return textMatches(eb, eb.fn.coalesce(eb.ref("users.email"), eb.val("")), filter.email.match, filter.email.value);
  if ("displayName" in filter) return textMatches(eb, eb.ref("users.name"), filter.displayName.match, filter.displayName.value);
  if ("orgId" in filter) return eb("users.org_id", "=", filter.orgId);
  if ("type" in filter) return eb("users.type", "=", filter.type);
  if ("schemaId" in filter) return eb("users.schema_id", "=", filter.schemaId);
  if ("data" in filter) {
    const { field, value, match } = filter.data;
    return eb.exists(
      eb
        .selectFrom("user_search_values as v")
        .select("v.user_id")
        .whereRef("v.instance_id", "=", "users.instance_id")
        .whereRef("v.user_id", "=", "users.id")
        .where("v.field", "=", field)
        .where((v) => textMatches(v, v.ref("v.value"), match, value)),
    );
  }
  return eb("users.state", "=", filter.state);
}

/** Filters are combined with AND; ties of the sort column are broken by id. */
export async function searchUsers(db: Db, instanceId: string, search: UserSearch) {
  const schemaIds = search.filters.flatMap((f) => ("schemaId" in f ? [f.schemaId] : []));
  const fields = search.filters.flatMap((f) => ("data" in f ? [f.data.field] : []));
  await requireSearchableFields(db, instanceId, fields, schemaIds);
  let query = db.selectFrom("users").where("users.instance_id", "=", instanceId);
  if (search.within) query = query.where("users.org_id", "in", [...search.within, ""]);
  for (const filter of search.filters) query = query.where((eb) => matches(eb, filter));
  const found = await searchPage(
    db,
    AGGREGATE,
    instanceId,
    query,
    (q, direction) => q.orderBy((eb) => sortExpression(eb, search.sort), direction).orderBy("users.id", direction),
    search.page,
    ["id"],
  );
  if (found.rows.length === 0) return { ...found, rows: [] };
  // The page's users, read again with their view columns (joined from other tables): the page's statement reads their ids.
  const ids = found.rows.map((r) => r.id);
  const full = new Map(
    (await withViewColumns(db.selectFrom("users").where("users.instance_id", "=", instanceId).where("users.id", "in", ids)).execute()).map((r) => [r.id, r]),
  );
  return { ...found, rows: ids.flatMap((id) => (full.has(id) ? [userView(full.get(id)!)] : [])) };
}

/** Text columns sort byte-wise, so that PostgreSQL and PGlite agree whatever their collation. */
function sortExpression(eb: ExpressionBuilder<Database, "users">, sort: UserSortColumn) {
  switch (sort) {
    case "username":
    case "name":
    case "email":
      return sql`${eb.ref(`users.${sort}`)} collate "C"`;
    default:
      return eb.ref(`users.${sort}`);
  }
}

/** The organization a user belongs to, for authorization in its context. */
export async function orgOfUser(db: Db | Tx, instanceId: string, id: string): Promise<string | undefined> {
  const row = await db.selectFrom("users").select("org_id").where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  return row?.org_id;
}
