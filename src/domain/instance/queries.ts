import type { Db } from "../../store/eventstore.js";

export interface InstanceRef {
  id: string;
  domain: string;
}

export async function instanceByDomain(db: Db, domain: string): Promise<InstanceRef | undefined> {
  const row = await db
    .selectFrom("instance_domains as d")
    .innerJoin("instances as i", (j) => j.onRef("i.id", "=", "d.instance_id").onRef("i.instance_id", "=", "d.instance_id"))
    .select(["i.id", "d.domain"])
    .where("d.domain", "=", domain.toLowerCase())
    .executeTakeFirst();
  return row && { id: row.id, domain: row.domain };
}

export async function hasAnyInstance(db: Db): Promise<boolean> {
  const row = await db.selectFrom("instances").select("id").limit(1).executeTakeFirst();
  return row !== undefined;
}

export async function instanceById(db: Db, id: string): Promise<InstanceRef | undefined> {
  const row = await db
    .selectFrom("instances as i")
    .innerJoin("instance_domains as d", (j) => j.onRef("d.instance_id", "=", "i.id").on("d.is_primary", "=", true))
    .select(["i.id", "d.domain"])
    .where("i.id", "=", id)
    .where("i.instance_id", "=", id)
    .executeTakeFirst();
  return row && { id: row.id, domain: row.domain };
}

/** Read when needed rather than cached with the instance: it changes with SetAsInstanceDefault. */
export async function defaultOrgId(db: Db, instanceId: string): Promise<string> {
  const row = await db
    .selectFrom("instances")
    .select("default_org_id")
    .where("instance_id", "=", instanceId)
    .where("id", "=", instanceId)
    .executeTakeFirstOrThrow();
  return row.default_org_id;
}
