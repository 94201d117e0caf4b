import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import { UNDER_ACTIVE_PROJECT_GRANT, type RoleGrant } from "../grant/queries.js";

/** The user behind a token, when the user and its organization are active. */
export interface Account {
  userId: string;
  orgId: string;
  orgName: string;
  primaryDomain: string;
  username: string;
  loginName: string;
  row: {
    type: "human" | "machine" | "schema";
    name: string;
    given_name: string | null;
    family_name: string | null;
    nick_name: string | null;
    preferred_language: string | null;
    gender: string | null;
    email: string | null;
    email_verified: boolean | null;
    phone: string | null;
    phone_verified: boolean | null;
    schema_id: string | null;
    schema_revision: number | null;
    change_date: Date;
  };
}

export async function activeAccount(db: Db, instanceId: string, userId: string): Promise<Account | undefined> {
  return (await activeAccountWithGrants(db, instanceId, userId, []))?.account;
}

/**
 * The account and, in the same statement, the user's grants on the given projects (what
 * role claims are made of, oidc/helpers/roles.ts): userinfo and introspection need both, and a round
 * trip to the database costs more than either lookup.
 */
export async function activeAccountWithGrants(
  db: Db,
  instanceId: string,
  userId: string,
  projectIds: readonly string[],
): Promise<{ account: Account; grants: RoleGrant[] } | undefined> {
  const grants =
    projectIds.length === 0
      ? sql<RoleGrant[]>`'[]'::json`
      : sql<RoleGrant[]>`coalesce((
          select json_agg(json_build_object(
            'project_id', g.project_id, 'org_id', g.org_id, 'role_keys', g.role_keys, 'role_assertion', p.role_assertion,
            'domain', coalesce((select d.domain from org_domains d where d.instance_id = g.instance_id and d.org_id = g.org_id and d.is_primary), '')))
          from user_grants g
          join projects p on p.instance_id = g.instance_id and p.id = g.project_id
          where g.instance_id = u.instance_id and g.user_id = u.id and g.project_id in (${sql.join(projectIds)}) and p.state = 'active'
            and ${sql.raw(UNDER_ACTIVE_PROJECT_GRANT)}
        ), '[]'::json)`;
  const row = await db
    .selectFrom("users as u")
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "u.instance_id").onRef("o.id", "=", "u.org_id"))
    .select([
      "u.id",
      "u.org_id",
      "u.username",
      "u.type",
      "u.name",
      "u.given_name",
      "u.family_name",
      "u.nick_name",
      "u.preferred_language",
      "u.gender",
      "u.email",
      "u.email_verified",
      "u.phone",
      "u.phone_verified",
      "u.schema_id",
      "u.schema_revision",
      "u.change_date",
      "o.name as org_name",
      sql<string>`coalesce((select d.domain from org_domains d where d.instance_id = u.instance_id and d.org_id = u.org_id and d.is_primary), '')`.as(
        "primary_domain",
      ),
      grants.as("grants"),
    ])
    .where("u.instance_id", "=", instanceId)
    .where("u.id", "=", userId)
    .where("u.state", "=", "active")
    .where("o.state", "=", "active")
    .executeTakeFirst();
  if (!row) return undefined;
  const { grants: grantRows, ...user } = row;
  const account = {
    userId: row.id,
    orgId: row.org_id,
    orgName: row.org_name,
    primaryDomain: row.primary_domain,
    username: row.username,
    loginName: `${row.username}@${row.primary_domain}`,
    row: user,
  };
  return { account, grants: grantRows };
}
