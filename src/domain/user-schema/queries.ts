import type { Db } from "../../store/db.js";
import { searchPage, textMatches, type Page, type TextMatch } from "../../store/search.js";
import { notFound } from "../errors.js";
import { AGGREGATE, userSchemaView, type UserSchemaState, type UserSchemaView } from "./model.js";

/** Whether the instance has this schema: its owner, for authorization (an instance owns its schemas). */
export async function hasUserSchema(db: Db, instanceId: string, id: string): Promise<boolean> {
  const row = await db.selectFrom("user_schemas").select("id").where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  return row !== undefined;
}

export async function getUserSchema(db: Db, instanceId: string, id: string): Promise<UserSchemaView> {
  const row = await db.selectFrom("user_schemas").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`user schema ${id} not found`);
  return userSchemaView(row);
}

export type UserSchemaFilter = { type: { value: string; match: TextMatch } } | { state: UserSchemaState };

export interface UserSchemaSearch {
  filters: UserSchemaFilter[];
  sort: "type" | "created_at" | "change_date";
  page: Page;
}

/** Filters are combined with AND; ties of the sort column are broken by id. */
export async function searchUserSchemas(db: Db, instanceId: string, search: UserSchemaSearch) {
  let query = db.selectFrom("user_schemas").where("user_schemas.instance_id", "=", instanceId);
  for (const filter of search.filters) {
    if ("type" in filter) query = query.where((eb) => textMatches(eb, eb.ref("user_schemas.type"), filter.type.match, filter.type.value));
    else query = query.where("user_schemas.state", "=", filter.state);
  }
  const found = await searchPage(
    db,
    AGGREGATE,
    instanceId,
    query,
    (q, direction) => q.orderBy(`user_schemas.${search.sort}`, direction).orderBy("user_schemas.id", direction),
    search.page,
  );
  return { ...found, rows: found.rows.map(userSchemaView) };
}
