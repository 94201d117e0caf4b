import type { Db } from "../../store/eventstore.js";

export interface InstanceRef {
  id: string;
  domain: string;
  defaultOrgId: string;
}

export async function instanceByDomain(db: Db, domain: string): Promise<InstanceRef | undefined> {
  const row = await db
    .selectFrom("instance_domains as d")
    .innerJoin("instances as i", (j) => j.onRef("i.id", "=", "d.instance_id").onRef("i.instance_id", "=", "d.instance_id"))
    .select(["i.id", "d.domain", "i.default_org_id"])
    .where("d.domain", "=", domain.toLowerCase())
    .executeTakeFirst();
  return row && { id: row.id, domain: row.domain, defaultOrgId: row.default_org_id };
}

export async function hasAnyInstance(db: Db): Promise<boolean> {
  const row = await db.selectFrom("instances").select("id").limit(1).executeTakeFirst();
  return row !== undefined;
}

export async function instanceById(db: Db, id: string): Promise<InstanceRef | undefined> {
  const row = await db
    .selectFrom("instances as i")
    .innerJoin("instance_domains as d", (j) => j.onRef("d.instance_id", "=", "i.id").on("d.is_primary", "=", true))
    .select(["i.id", "d.domain", "i.default_org_id"])
    .where("i.id", "=", id)
    .where("i.instance_id", "=", id)
    .executeTakeFirst();
  return row && { id: row.id, domain: row.domain, defaultOrgId: row.default_org_id };
}
