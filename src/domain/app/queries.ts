import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import { searchPage, textMatches, type Page, type TextMatch } from "../../store/search.js";
import { notFound } from "../errors.js";
import { AGGREGATE, appView, type AppView } from "./model.js";

/** The organization owning an application (its project's); undefined when there is none. */
export async function orgOfApp(db: Db, instanceId: string, id: string): Promise<string | undefined> {
  const row = await db.selectFrom("apps").select("org_id").where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  return row?.org_id;
}

export async function getApp(db: Db, instanceId: string, id: string): Promise<AppView> {
  const row = await db.selectFrom("apps").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`application ${id} not found`);
  return appView(row);
}

export type AppFilter = { projectId: string } | { name: { value: string; match: TextMatch } } | { state: "active" | "inactive" } | { clientId: string };

export interface AppSearch {
  filters: AppFilter[];
  sort: "created_at" | "change_date" | "name";
  page: Page;
  /** Only applications of these organizations (an organization ctx, or what the caller may read). */
  within?: ReadonlySet<string>;
}

/** Filters are combined with AND; ties of the sort column are broken by id. */
export async function searchApps(db: Db, instanceId: string, search: AppSearch) {
  let query = db.selectFrom("apps").where("apps.instance_id", "=", instanceId);
  if (search.within) query = query.where("apps.org_id", "in", [...search.within, ""]);
  for (const filter of search.filters) {
    if ("projectId" in filter) query = query.where("apps.project_id", "=", filter.projectId);
    else if ("name" in filter) query = query.where((eb) => textMatches(eb, eb.ref("apps.name"), filter.name.match, filter.name.value));
    else if ("state" in filter) query = query.where("apps.state", "=", filter.state);
    else query = query.where("apps.client_id", "=", filter.clientId);
  }
  const found = await searchPage(
    db,
    AGGREGATE,
    instanceId,
    query,
    (q, direction) =>
      (search.sort === "name" ? q.orderBy(sql`apps.name collate "C"`, direction) : q.orderBy(`apps.${search.sort}`, direction)).orderBy("apps.id", direction),
    search.page,
  );
  return { ...found, rows: found.rows.map(appView) };
}

/** The name of the application with this client_id, when it is one of the instance's (what the login pages show). */
export async function appNameByClientId(db: Db, instanceId: string, clientId: string): Promise<string | undefined> {
  const row = await db.selectFrom("apps").select("name").where("instance_id", "=", instanceId).where("client_id", "=", clientId).executeTakeFirst();
  return row?.name;
}
