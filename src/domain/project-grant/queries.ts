import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import { searchPage, type Page } from "../../store/search.js";
import { notFound } from "../errors.js";
import { AGGREGATE, projectGrantView, type ProjectGrantView } from "./model.js";

/** An organization a project is granted to, with the grant: who may act on the project as a grantee. */
export interface Grantee {
  orgId: string;
  projectGrantId: string;
}

/** The organization owning a project grant (the project's); undefined when there is none. */
export async function orgOfProjectGrant(db: Db, instanceId: string, id: string): Promise<string | undefined> {
  const row = await db.selectFrom("project_grants").select("org_id").where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  return row?.org_id;
}

/** A project grant as a request's context: its id and the organization it was given to. */
export async function projectGrantInContext(db: Db, instanceId: string, id: string): Promise<{ id: string; orgId: string } | undefined> {
  const row = await db.selectFrom("project_grants").select("granted_org_id").where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  return row && { id, orgId: row.granted_org_id };
}

/** The organizations a project is granted to, active grants or not. */
export async function granteesOfProject(db: Db, instanceId: string, projectId: string): Promise<Grantee[]> {
  const rows = await db
    .selectFrom("project_grants")
    .select(["granted_org_id", "id"])
    .where("instance_id", "=", instanceId)
    .where("project_id", "=", projectId)
    .execute();
  return rows.map((r) => ({ orgId: r.granted_org_id, projectGrantId: r.id }));
}

/** The organization a project grant was given to. */
export async function granteeOfProjectGrant(db: Db, instanceId: string, id: string): Promise<Grantee[]> {
  const grant = await projectGrantInContext(db, instanceId, id);
  return grant ? [{ orgId: grant.orgId, projectGrantId: id }] : [];
}

export async function getProjectGrant(db: Db, instanceId: string, id: string): Promise<ProjectGrantView> {
  const row = await db.selectFrom("project_grants").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`project grant ${id} not found`);
  return projectGrantView(row);
}

export type ProjectGrantFilter = { projectId: string } | { grantedOrgId: string } | { roleKey: string };

export interface ProjectGrantSearch {
  filters: ProjectGrantFilter[];
  sort: "created_at" | "change_date";
  page: Page;
  /** Only grants of these organizations' projects and grants given to them (an organization ctx, or what the caller may read). */
  within?: ReadonlySet<string>;
}

/** Filters are combined with AND; ties of the sort column are broken by id. */
export async function searchProjectGrants(db: Db, instanceId: string, search: ProjectGrantSearch) {
  let query = db.selectFrom("project_grants").where("project_grants.instance_id", "=", instanceId);
  const within = search.within && [...search.within, ""];
  if (within) query = query.where((eb) => eb.or([eb("project_grants.org_id", "in", within), eb("project_grants.granted_org_id", "in", within)]));
  for (const filter of search.filters) {
    if ("projectId" in filter) query = query.where("project_grants.project_id", "=", filter.projectId);
    else if ("grantedOrgId" in filter) query = query.where("project_grants.granted_org_id", "=", filter.grantedOrgId);
    else query = query.where(sql<boolean>`project_grants.role_keys @> ${JSON.stringify([filter.roleKey])}::jsonb`);
  }
  const found = await searchPage(
    db,
    AGGREGATE,
    instanceId,
    query,
    (q, direction) => q.orderBy(`project_grants.${search.sort}`, direction).orderBy("project_grants.id", direction),
    search.page,
  );
  return { ...found, rows: found.rows.map(projectGrantView) };
}
