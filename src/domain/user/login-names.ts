import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import { prepared } from "../../store/prepared.js";
import type { UserRow } from "../../store/schema.js";
import { validatesOrgDomains } from "../settings/domain.js";

export interface LoginUser {
  id: string;
  orgId: string;
  state: "active" | "inactive" | "locked";
  loginName: string;
  /** The whole row and the password's hash, read along: the sign-in path needs no second statement for them. */
  row: UserRow;
  password?: StoredPassword;
}

/** A password as stored. */
export interface StoredPassword {
  hash: string;
}

/**
 * People, and schema users whose schema lets them sign in with their username, of active
 * organizations, with their login name and password, as the sign-in path reads them.
 */
function signInCandidates(db: Db, instanceId: string, orgId: string | undefined) {
  return db
    .selectFrom("users as u")
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "u.instance_id").onRef("o.id", "=", "u.org_id"))
    .leftJoin("user_secrets as s", (j) => j.onRef("s.instance_id", "=", "u.instance_id").onRef("s.user_id", "=", "u.id").on("s.kind", "=", "password"))
    .leftJoin("user_schemas as us", (j) => j.onRef("us.instance_id", "=", "u.instance_id").onRef("us.id", "=", "u.schema_id"))
    .selectAll("u")
    .select([
      "s.hash as password_hash",
      "us.possible_authenticators as schema_authenticators",
      sql<string>`u.username || '@' || coalesce((select d.domain from org_domains d where d.instance_id = u.instance_id and d.org_id = u.org_id and d.is_primary), '')`.as(
        "login_name",
      ),
    ])
    .where("u.instance_id", "=", instanceId)
    .where((eb) =>
      eb.or([eb("u.type", "=", "human"), eb.and([eb("u.type", "=", "schema"), sql<boolean>`us.possible_authenticators @> '["username"]'::jsonb`])]),
    )
    .where("o.state", "=", "active")
    .$if(orgId !== undefined, (q) => q.where("u.org_id", "=", orgId!));
}

type CandidateRow = UserRow & { password_hash: string | null; login_name: string; schema_authenticators: string[] | null };

/*
 * Every sign-in reads its user by one of these, prepared (store/prepared.ts): built as an
 * unnamed statement PostgreSQL planned this join again on every call, about 0.7 ms of the
 * server's CPU per sign-in, more than the rest of a CreateSession's statements together.
 * One statement per shape: restricted to an organization or not, and for `username@domain`
 * with or without unverified domains.
 */
type ByName = { instanceId: string; orgId: string; username: string };

const BY_USERNAME = [false, true].map((inOrg) =>
  prepared((db, p: ByName) => signInCandidates(db, p.instanceId, inOrg ? p.orgId : undefined).where(sql<string>`lower(u.username)`, "=", p.username)),
);

const BY_DOMAIN_LOGIN_NAME = [false, true].flatMap((inOrg) =>
  [false, true].map((verifiedOnly) =>
    prepared((db, p: ByName & { domain: string }) =>
      signInCandidates(db, p.instanceId, inOrg ? p.orgId : undefined)
        .where(sql<string>`lower(u.username)`, "=", p.username)
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom("org_domains as d")
              .select("d.domain")
              .whereRef("d.instance_id", "=", "u.instance_id")
              .whereRef("d.org_id", "=", "u.org_id")
              .where(sql<string>`lower(d.domain)`, "=", p.domain)
              .$if(verifiedOnly, (q) => q.where((d) => d.or([d("d.is_verified", "=", true), d("d.is_primary", "=", true)]))),
          ),
        ),
    ),
  ),
);

const BY_ID = prepared((db, p: { instanceId: string; id: string }) => signInCandidates(db, p.instanceId, undefined).where("u.id", "=", p.id));

function loginUser(found: CandidateRow | undefined): LoginUser | undefined {
  if (!found) return undefined;
  const { password_hash, login_name, schema_authenticators, ...row } = found;
  // A schema whose users no longer sign in with a password leaves theirs unused.
  const passwordAllowed = row.type !== "schema" || (schema_authenticators ?? []).includes("password");
  return {
    id: row.id,
    orgId: row.org_id,
    state: row.state as LoginUser["state"],
    loginName: login_name,
    row,
    ...(password_hash !== null && passwordAllowed && { password: { hash: password_hash } }),
  };
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
  const name = loginName.trim().toLowerCase();
  const at = name.lastIndexOf("@");
  const inOrg = orgId !== undefined;
  let row: CandidateRow | undefined;
  if (at > 0) {
    const verifiedOnly = await validatesOrgDomains(db, instanceId);
    const query = BY_DOMAIN_LOGIN_NAME[Number(inOrg) * 2 + Number(verifiedOnly)]!;
    [row] = await query(db, { instanceId, orgId: orgId ?? "", username: name.slice(0, at), domain: name.slice(at + 1) });
  }
  row ??= (await BY_USERNAME[Number(inOrg)]!(db, { instanceId, orgId: orgId ?? "", username: name }))[0];
  return loginUser(row);
}

/** The person with this ID, if they may sign in (human, of an active organization), read as userByLoginName reads them. */
export async function loginUserById(db: Db, instanceId: string, id: string): Promise<LoginUser | undefined> {
  return loginUser((await BY_ID(db, { instanceId, id }))[0]);
}

export async function defaultOrgOf(db: Db, instanceId: string): Promise<string> {
  const row = await db
    .selectFrom("instances")
    .select("default_org_id")
    .where("instance_id", "=", instanceId)
    .where("id", "=", instanceId)
    .executeTakeFirstOrThrow();
  return row.default_org_id;
}
