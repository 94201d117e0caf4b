import { sql } from "kysely";
import type { Db } from "../../store/eventstore.js";
import { validatesOrgDomains } from "../settings/domain.js";

export interface LoginUser {
  id: string;
  orgId: string;
  state: "active" | "inactive" | "locked";
  loginName: string;
}

/**
 * The person a login name names: `username@domain` with a domain of the user's organization,
 * else the username itself (unique in the instance, and it may contain "@"). The domain
 * reading comes first, so that a username that happens to read as another organization's
 * login name (made before that organization added the domain) never shadows it. Users of
 * inactive organizations and machine users cannot sign in here; `orgId` restricts the login
 * to one organization (scope urn:platform:iam:org:id:<id>). While the instance's domain
 * settings say validate_org_domains, only verified domains (and the primary one, which
 * forms the login names shown) read as login domains.
 */
export async function userByLoginName(db: Db, instanceId: string, loginName: string, orgId?: string): Promise<LoginUser | undefined> {
  const base = db
    .selectFrom("users as u")
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "u.instance_id").onRef("o.id", "=", "u.org_id"))
    .select([
      "u.id",
      "u.org_id",
      "u.state",
      sql<string>`u.username || '@' || coalesce((select d.domain from org_domains d where d.instance_id = u.instance_id and d.org_id = u.org_id and d.is_primary), '')`.as("login_name"),
    ])
    .where("u.instance_id", "=", instanceId)
    .where("u.type", "=", "human")
    .where("o.state", "=", "active")
    .$if(orgId !== undefined, (q) => q.where("u.org_id", "=", orgId!));
  const name = loginName.trim().toLowerCase();
  const at = name.lastIndexOf("@");
  const verifiedOnly = at > 0 && (await validatesOrgDomains(db, instanceId));
  let row =
    at > 0
      ? await base
          .where(sql<string>`lower(u.username)`, "=", name.slice(0, at))
          .where((eb) =>
            eb.exists(
              eb
                .selectFrom("org_domains as d")
                .select("d.domain")
                .whereRef("d.instance_id", "=", "u.instance_id")
                .whereRef("d.org_id", "=", "u.org_id")
                .where(sql<string>`lower(d.domain)`, "=", name.slice(at + 1))
                .$if(verifiedOnly, (q) => q.where((d) => d.or([d("d.is_verified", "=", true), d("d.is_primary", "=", true)]))),
            ),
          )
          .executeTakeFirst()
      : undefined;
  row ??= await base.where(sql<string>`lower(u.username)`, "=", name).executeTakeFirst();
  return row && { id: row.id, orgId: row.org_id, state: row.state as LoginUser["state"], loginName: row.login_name };
}

export async function defaultOrgOf(db: Db, instanceId: string): Promise<string> {
  const row = await db.selectFrom("instances").select("default_org_id").where("instance_id", "=", instanceId).where("id", "=", instanceId).executeTakeFirstOrThrow();
  return row.default_org_id;
}
