import { sql, type ExpressionBuilder } from "kysely";
import type { Db, Tx } from "../../store/db.js";
import { systemProjectionState } from "../../store/projection-state.js";
import type { Database, InstanceRow } from "../../store/schema.js";
import { searchPage, textMatches, type Page, type TextMatch } from "../../store/search.js";
import { notFound } from "../errors.js";
import { DEFAULT_PASSWORD_POLICY, type PasswordPolicy } from "../user/password-policy.js";
import { instanceDetails } from "./commands.js";
import type { ObjectDetails } from "../details.js";
import { LANGUAGE_SETTINGS } from "../settings/language.js";
import { resolveSettingsIn } from "../settings/rows.js";

export interface InstanceRef {
  id: string;
  domain: string;
  /** Blocked by a limit: it answers nothing but system-context calls. */
  blocked: boolean;
}

export async function instanceByDomain(db: Db, domain: string): Promise<InstanceRef | undefined> {
  const row = await db
    .selectFrom("instance_domains as d")
    .innerJoin("instances as i", (j) => j.onRef("i.id", "=", "d.instance_id").onRef("i.instance_id", "=", "d.instance_id"))
    .select(["i.id", "d.domain", "i.blocked"])
    .where("d.domain", "=", domain.toLowerCase())
    .executeTakeFirst();
  return row && { id: row.id, domain: row.domain, blocked: row.blocked };
}

export async function hasAnyInstance(db: Db): Promise<boolean> {
  const row = await db.selectFrom("instances").select("id").limit(1).executeTakeFirst();
  return row !== undefined;
}

export async function instanceById(db: Db, id: string): Promise<InstanceRef | undefined> {
  const row = await db
    .selectFrom("instances as i")
    .innerJoin("instance_domains as d", (j) => j.onRef("d.instance_id", "=", "i.id").on("d.is_primary", "=", true))
    .select(["i.id", "d.domain", "i.blocked"])
    .where("i.id", "=", id)
    .where("i.instance_id", "=", id)
    .executeTakeFirst();
  return row && { id: row.id, domain: row.domain, blocked: row.blocked };
}

/** Read when needed rather than cached with the instance: it changes with SetAsInstanceDefault. */
/** The instance's name: the issuer authenticator apps show, the relying party name of passkeys. */
export async function instanceName(db: Db | Tx, id: string): Promise<string> {
  return (await db.selectFrom("instances").select("name").where("instance_id", "=", id).where("id", "=", id).executeTakeFirstOrThrow()).name;
}

export async function defaultOrgId(db: Db, instanceId: string): Promise<string> {
  const row = await db
    .selectFrom("instances")
    .select("default_org_id")
    .where("instance_id", "=", instanceId)
    .where("id", "=", instanceId)
    .executeTakeFirstOrThrow();
  return row.default_org_id;
}

export interface InstanceView {
  details: ObjectDetails;
  name: string;
  blocked: boolean;
  domains: { domain: string; isPrimary: boolean; createdAt: Date }[];
  defaultOrgId: string;
  defaultLanguage: string;
  passwordPolicy: PasswordPolicy;
  auditLogRetentionMs: number | null;
}

async function instanceViews(db: Db, rows: InstanceRow[]): Promise<InstanceView[]> {
  if (rows.length === 0) return [];
  const [domains, languages] = await Promise.all([
    db
      .selectFrom("instance_domains")
      .selectAll()
      .where(
        "instance_id",
        "in",
        rows.map((r) => r.id),
      )
      .orderBy("is_primary", "desc")
      .orderBy("created_at")
      .orderBy("domain")
      .execute(),
    resolveSettingsIn(
      db,
      LANGUAGE_SETTINGS,
      rows.map((r) => ({ type: "instance", instanceId: r.id })),
    ),
  ]);
  return rows.map((row, i) => ({
    details: instanceDetails(row),
    name: row.name,
    blocked: row.blocked,
    domains: domains.filter((d) => d.instance_id === row.id).map((d) => ({ domain: d.domain, isPrimary: d.is_primary, createdAt: d.created_at })),
    defaultOrgId: row.default_org_id,
    defaultLanguage: languages[i]!.resolved.default_language!.value as string,
    passwordPolicy: row.password_policy ?? DEFAULT_PASSWORD_POLICY,
    auditLogRetentionMs: row.audit_log_retention_ms,
  }));
}

export async function getInstance(db: Db, id: string): Promise<InstanceView> {
  const row = await db.selectFrom("instances").selectAll().where("instance_id", "=", id).where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`instance ${id} not found`);
  return (await instanceViews(db, [row]))[0]!;
}

export type InstanceFilter =
  { ids: string[] } | { name: { value: string; match: TextMatch } } | { domain: { value: string; match: TextMatch } } | { blocked: boolean };
export type InstanceSortColumn = "id" | "created_at" | "change_date" | "name";

export interface InstanceSearch {
  filters: InstanceFilter[];
  sort: InstanceSortColumn;
  page: Page;
  /** Only this instance (what an instance's own administrators may read); undefined: all. */
  only?: string;
}

/**
 * Instances across the system. For system members, who see them all, the list details'
 * projection state is the system's: the global position of the newest instance event
 * anywhere (an instance created or removed through another instance moves it). For a
 * search of one instance (its own administrators), that instance's: another tenant's
 * activity must not show in it.
 */
export async function searchInstances(db: Db, search: InstanceSearch) {
  let query = db.selectFrom("instances").whereRef("instances.instance_id", "=", "instances.id");
  if (search.only !== undefined) query = query.where("instances.id", "=", search.only);
  for (const filter of search.filters) {
    if ("ids" in filter) query = query.where((eb) => eb("instances.id", "=", eb.fn.any(eb.val(filter.ids))));
    else if ("name" in filter) query = query.where((eb) => textMatches(eb, eb.ref("instances.name"), filter.name.match, filter.name.value));
    else if ("blocked" in filter) query = query.where("instances.blocked", "=", filter.blocked);
    else {
      const { value, match } = filter.domain;
      query = query.where((eb) =>
        eb.exists(
          eb
            .selectFrom("instance_domains as d")
            .select("d.domain")
            .whereRef("d.instance_id", "=", "instances.id")
            .where((d) => textMatches(d, d.ref("d.domain"), match, value)),
        ),
      );
    }
  }
  const found = await searchPage(
    db,
    "instance",
    search.only ?? (() => systemProjectionState(db, "instance")),
    query,
    (q, direction) => q.orderBy((eb) => sortExpression(eb, search.sort), direction).orderBy("instances.id", direction),
    search.page,
  );
  return { ...found, rows: await instanceViews(db, found.rows) };
}

function sortExpression(eb: ExpressionBuilder<Database, "instances">, sort: InstanceSortColumn) {
  return sort === "name" ? sql`${eb.ref("instances.name")} collate "C"` : eb.ref(`instances.${sort}`);
}

/** The client_id the console signs in with in this instance, once provisioned. */
export async function consoleClientOf(db: Db, instanceId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("instances")
    .select("console_client_id")
    .where("instance_id", "=", instanceId)
    .where("id", "=", instanceId)
    .executeTakeFirst();
  return row?.console_client_id ?? undefined;
}
