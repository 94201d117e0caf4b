import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import { AGGREGATE, type ProjectState, projectView, type ProjectView, roleView, type RoleView } from "./model.js";
import { searchPage, textMatches, type Page, type TextMatch } from "../../store/search.js";
import { notFound } from "../errors.js";

/** The organization owning a project; undefined when there is none in the instance. */
export async function orgOfProject(db: Db, instanceId: string, id: string): Promise<string | undefined> {
  const row = await db.selectFrom("projects").select("org_id").where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  return row?.org_id;
}

export async function getProject(db: Db, instanceId: string, id: string): Promise<ProjectView> {
  const row = await db.selectFrom("projects").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`project ${id} not found`);
  return projectView(row);
}

export type ProjectFilter = { ids: string[] } | { name: { value: string; match: TextMatch } } | { state: ProjectState };

export interface ProjectSearch {
  filters: ProjectFilter[];
  sort: "id" | "created_at" | "change_date" | "name";
  page: Page;
  /** Only these organizations' projects and those granted to them (an organization ctx, or what the caller may read). */
  within?: ReadonlySet<string>;
}

/** Filters are combined with AND; ties of the sort column are broken by id. */
export async function searchProjects(db: Db, instanceId: string, search: ProjectSearch) {
  let query = db.selectFrom("projects").where("projects.instance_id", "=", instanceId);
  const within = search.within && [...search.within, ""];
  if (within) {
    query = query.where((eb) =>
      eb.or([
        eb("projects.org_id", "in", within),
        eb.exists(
          eb
            .selectFrom("project_grants as pg")
            .select("pg.id")
            .whereRef("pg.instance_id", "=", "projects.instance_id")
            .whereRef("pg.project_id", "=", "projects.id")
            .where("pg.granted_org_id", "in", within),
        ),
      ]),
    );
  }
  for (const filter of search.filters) {
    if ("ids" in filter) query = query.where((eb) => eb("projects.id", "=", eb.fn.any(eb.val(filter.ids))));
    else if ("name" in filter) query = query.where((eb) => textMatches(eb, eb.ref("projects.name"), filter.name.match, filter.name.value));
    else query = query.where("projects.state", "=", filter.state);
  }
  const found = await searchPage(
    db,
    AGGREGATE,
    instanceId,
    query,
    (q, direction) =>
      (search.sort === "name" ? q.orderBy(sql`projects.name collate "C"`, direction) : q.orderBy(`projects.${search.sort}`, direction)).orderBy(
        "projects.id",
        direction,
      ),
    search.page,
  );
  return { ...found, rows: found.rows.map(projectView) };
}

export type RoleFilter = { [K in "key" | "displayName" | "group"]: { field: K; value: string; match: TextMatch } }["key" | "displayName" | "group"];

const ROLE_COLUMNS = { key: "key", displayName: "display_name", group: "group_name" } as const;

/** The roles of a project; byte-wise sorted by the chosen column (default the key), ties by key. */
export async function searchProjectRoles(
  db: Db,
  instanceId: string,
  projectId: string,
  search: { filters: RoleFilter[]; sort: keyof typeof ROLE_COLUMNS; page: Page },
): Promise<{ rows: RoleView[]; total: number; state: Awaited<ReturnType<typeof searchPage>>["state"] }> {
  const project = await db.selectFrom("projects").selectAll().where("instance_id", "=", instanceId).where("id", "=", projectId).executeTakeFirst();
  if (!project) throw notFound(`project ${projectId} not found`);
  let query = db.selectFrom("project_roles").where("project_roles.instance_id", "=", instanceId).where("project_roles.project_id", "=", projectId);
  for (const filter of search.filters) {
    query = query.where((eb) => textMatches(eb, eb.ref(`project_roles.${ROLE_COLUMNS[filter.field]}`), filter.match, filter.value));
  }
  const found = await searchPage(
    db,
    AGGREGATE,
    instanceId,
    query,
    (q, direction) =>
      q.orderBy(sql`${sql.ref(`project_roles.${ROLE_COLUMNS[search.sort]}`)} collate "C"`, direction).orderBy(sql`project_roles.key collate "C"`, direction),
    search.page,
  );
  return { ...found, rows: found.rows.map((role) => roleView(role, project)) };
}

/** Which of these projects the instance has, active: a token's audience names only those. */
export async function activeProjectIds(db: Db, instanceId: string, ids: readonly string[]): Promise<Set<string>> {
  const rows = await db
    .selectFrom("projects")
    .select("id")
    .where("instance_id", "=", instanceId)
    .where("id", "in", ids)
    .where("state", "=", "active")
    .execute();
  return new Set(rows.map((r) => r.id));
}
