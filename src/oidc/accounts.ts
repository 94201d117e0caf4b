import { sql } from "kysely";
import type { Db } from "../store/eventstore.js";

/** The user behind a token, when the user and its organization are active. */
export interface Account {
  userId: string;
  orgId: string;
  orgName: string;
  primaryDomain: string;
  username: string;
  loginName: string;
  row: {
    type: "human" | "machine";
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
    change_date: Date;
  };
}

export async function activeAccount(db: Db, instanceId: string, userId: string): Promise<Account | undefined> {
  const row = await db
    .selectFrom("users as u")
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "u.instance_id").onRef("o.id", "=", "u.org_id"))
    .select([
      "u.id", "u.org_id", "u.username", "u.type", "u.name", "u.given_name", "u.family_name", "u.nick_name", "u.preferred_language",
      "u.gender", "u.email", "u.email_verified", "u.phone", "u.phone_verified", "u.change_date", "o.name as org_name",
      sql<string>`coalesce((select d.domain from org_domains d where d.instance_id = u.instance_id and d.org_id = u.org_id and d.is_primary), '')`.as("primary_domain"),
    ])
    .where("u.instance_id", "=", instanceId)
    .where("u.id", "=", userId)
    .where("u.state", "=", "active")
    .where("o.state", "=", "active")
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    userId: row.id,
    orgId: row.org_id,
    orgName: row.org_name,
    primaryDomain: row.primary_domain,
    username: row.username,
    loginName: `${row.username}@${row.primary_domain}`,
    row,
  };
}

/**
 * The claims of an account that the granted scopes release (OpenID Connect Core 1.0,
 * section 5.4). `address` is a standard scope with nothing stored behind it yet.
 */
export function claimsOf(account: Account, scopes: ReadonlySet<string>): Record<string, unknown> {
  const u = account.row;
  const claims: Record<string, unknown> = { sub: account.userId };
  if (scopes.has("profile")) {
    Object.assign(claims, {
      name: u.name,
      ...(u.given_name && { given_name: u.given_name }),
      ...(u.family_name && { family_name: u.family_name }),
      ...(u.nick_name && { nickname: u.nick_name }),
      ...(u.preferred_language && { locale: u.preferred_language }),
      ...(u.gender && { gender: u.gender }),
      preferred_username: account.loginName,
      updated_at: Math.floor(u.change_date.getTime() / 1000),
      "urn:platform:iam:user:resourceowner:id": account.orgId,
      "urn:platform:iam:user:resourceowner:name": account.orgName,
      "urn:platform:iam:user:resourceowner:primary_domain": account.primaryDomain,
    });
  }
  if (scopes.has("email") && u.email) Object.assign(claims, { email: u.email, email_verified: u.email_verified ?? false });
  if (scopes.has("phone") && u.phone) Object.assign(claims, { phone_number: u.phone, phone_number_verified: u.phone_verified ?? false });
  return claims;
}
