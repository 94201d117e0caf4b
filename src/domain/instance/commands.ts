import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import { forgetInstance } from "../../store/busy-instances.js";
import type { Tx } from "../../store/db.js";
import type { Editor } from "../../store/editor.js";
import type { PendingEvent } from "../../store/events.js";
import { provisionConsoleApp } from "./console-app.js";
import { newId } from "../../store/ids.js";
import { createInstanceSequence } from "../../store/instance-sequence.js";
import type { PasswordPolicyJson } from "../user/password-policy.js";
import type { InstanceRow, InstanceTable } from "../../store/schema.js";
import type { Updateable } from "kysely";
import type { Actor, ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from "../errors.js";
import { addOrg } from "../org/commands.js";
import { LANGUAGE_SETTINGS } from "../settings/language.js";
import { writeSettings } from "../settings/rows.js";
import { prepared } from "../../store/prepared.js";

const AGGREGATE = "instance";

export interface NewInstance {
  name: string;
  /** At least one; the first is primary. */
  domains: string[];
  defaultOrgName: string;
  defaultLanguage?: string;
  passwordPolicy?: PasswordPolicyJson;
}

/** Instances belong to the system. */
export function instanceDetails(row: Pick<InstanceRow, "id" | "sequence" | "change_date">): ObjectDetails {
  return { id: row.id, sequence: row.sequence, changeDate: row.change_date, owner: { type: "system", id: "" } };
}

/** Creates an instance with its domains, its default organization and the console's application there. */
export async function addInstance(tx: Tx, input: NewInstance, creator: Editor) {
  const domains = input.domains.map((d) => d.toLowerCase());
  if (new Set(domains).size !== domains.length) throw invalidArgument("domains must be distinct regardless of case");
  await ensureDomainsFree(tx, domains);
  const instanceId = newId();
  const orgId = newId();
  await createInstanceSequence(tx, instanceId);
  const appended = await appendEvents(
    tx,
    { instanceId, type: AGGREGATE, id: instanceId },
    0,
    [
      { type: "instance.added", payload: { name: input.name, passwordPolicy: input.passwordPolicy ?? null } },
      ...domains.map((domain, i) => ({ type: "instance.domain.added", payload: { domain, primary: i === 0 } })),
      { type: "instance.default.org.set", payload: { orgId } },
    ],
    creator,
  );
  const row = {
    instance_id: instanceId,
    id: instanceId,
    name: input.name,
    default_org_id: orgId,
    ...(input.passwordPolicy && { password_policy: JSON.stringify(input.passwordPolicy) }),
    ...createdBy(appended),
  };
  await tx.insertInto("instances").values(row).execute();
  await tx
    .insertInto("instance_domains")
    .values(domains.map((domain, i) => ({ domain, instance_id: instanceId, is_primary: i === 0, created_at: appended.createdAt })))
    .execute();
  await addOrg(tx, { instanceId, ...creator }, { id: orgId, name: input.defaultOrgName });
  // Every instance has the console's application from its start, as ZITADEL's has its console.
  await provisionConsoleApp(tx, { instanceId, ...creator }, orgId);
  if (input.defaultLanguage) await setDefaultLanguage(tx, creator, instanceId, input.defaultLanguage);
  return { instanceId, orgId, details: instanceDetails({ id: instanceId, sequence: appended.sequence, change_date: appended.createdAt }) };
}

export interface InstancePatch {
  name?: string;
  defaultLanguage?: string;
  passwordPolicy?: PasswordPolicyJson;
}

/** A patch that changes nothing succeeds without an event. */
export async function patchInstance(tx: Tx, actor: Actor, id: string, patch: InstancePatch): Promise<ObjectDetails> {
  const current = await instanceRowForUpdate(tx, id);
  const set: Updateable<InstanceTable> = {};
  const payload: Record<string, unknown> = {};
  if (patch.name !== undefined && patch.name !== current.name) set.name = payload.name = patch.name;
  if (patch.passwordPolicy && !samePolicy(patch.passwordPolicy, current.password_policy)) {
    payload.passwordPolicy = patch.passwordPolicy;
    set.password_policy = JSON.stringify(patch.passwordPolicy);
  }
  // Kept in the language settings; still a change of the instance for whoever patched it.
  if (patch.defaultLanguage !== undefined && (await setDefaultLanguage(tx, actor, id, patch.defaultLanguage)).changed)
    payload.defaultLanguage = patch.defaultLanguage;
  if (Object.keys(payload).length === 0) return instanceDetails(current);
  return changeInstance(tx, actor, current, [{ type: "instance.changed", payload }], set);
}

/** The instance API's default language is the instance's language settings (settings/language.ts). */
function setDefaultLanguage(tx: Tx, creator: Editor, instanceId: string, language: string) {
  return writeSettings(tx, creator, LANGUAGE_SETTINGS, { type: "instance", instanceId }, { set: { default_language: language }, reset: [] });
}

/** Limits of several instances: all are changed, or none (an unknown id fails the whole). */
export async function limitInstances(
  tx: Tx,
  actor: Actor,
  ids: string[],
  limits: { block?: boolean; auditLogRetentionMs?: number | null },
): Promise<ObjectDetails[]> {
  const results: ObjectDetails[] = [];
  // A fixed order of locks: two bulk limits over the same instances never deadlock.
  const order = [...ids].sort();
  const locked = new Map<string, InstanceRow>();
  for (const id of order) locked.set(id, await instanceRowForUpdate(tx, id));
  for (const id of ids) {
    const current = locked.get(id)!;
    const set: Updateable<InstanceTable> = {};
    const events: PendingEvent[] = [];
    if (limits.block !== undefined && limits.block !== current.blocked) {
      set.blocked = limits.block;
      events.push({ type: limits.block ? "instance.blocked" : "instance.unblocked", payload: {} });
    }
    if (limits.auditLogRetentionMs !== undefined && limits.auditLogRetentionMs !== current.audit_log_retention_ms) {
      set.audit_log_retention_ms = limits.auditLogRetentionMs;
      events.push({ type: "instance.audit_log_retention.set", payload: { ms: limits.auditLogRetentionMs } });
    }
    results.push(events.length === 0 ? instanceDetails(current) : await changeInstance(tx, actor, current, events, set));
  }
  return results;
}

export async function addInstanceDomain(tx: Tx, actor: Actor, id: string, domain: string): Promise<ObjectDetails> {
  const current = await instanceRowForUpdate(tx, id);
  const name = domain.toLowerCase();
  await ensureDomainsFree(tx, [name], id);
  const details = await changeInstance(tx, actor, current, [{ type: "instance.domain.added", payload: { domain: name, primary: false } }], {});
  await tx.insertInto("instance_domains").values({ domain: name, instance_id: id, is_primary: false, created_at: details.changeDate }).execute();
  return details;
}

export async function removeInstanceDomain(tx: Tx, actor: Actor, id: string, domain: string): Promise<ObjectDetails> {
  const current = await instanceRowForUpdate(tx, id);
  const row = await instanceDomain(tx, id, domain);
  if (row.is_primary) throw failedPrecondition(`${row.domain} is the instance's primary domain; make another domain primary first`);
  const details = await changeInstance(tx, actor, current, [{ type: "instance.domain.removed", payload: { domain: row.domain } }], {});
  await tx.deleteFrom("instance_domains").where("instance_id", "=", id).where("domain", "=", row.domain).execute();
  return details;
}

/** Setting the primary domain again succeeds without an event. */
export async function setPrimaryInstanceDomain(tx: Tx, actor: Actor, id: string, domain: string): Promise<ObjectDetails> {
  const current = await instanceRowForUpdate(tx, id);
  const row = await instanceDomain(tx, id, domain);
  if (row.is_primary) return instanceDetails(current);
  const details = await changeInstance(tx, actor, current, [{ type: "instance.domain.primary.set", payload: { domain: row.domain } }], {});
  await tx.updateTable("instance_domains").set({ is_primary: false }).where("instance_id", "=", id).where("is_primary", "=", true).execute();
  await tx.updateTable("instance_domains").set({ is_primary: true }).where("instance_id", "=", id).where("domain", "=", row.domain).execute();
  return details;
}

/** Every projection row of an instance, by table: what deleting it removes. */
const INSTANCE_TABLES = [
  // Pending deliveries and messages too: their targets and users go with the instance.
  "action_deliveries",
  "notifications",
  "user_codes",
  "user_factors",
  "user_recovery_codes",
  "sessions",
  "idp_intents",
  "user_webauthn_keys",
  "notification_providers",
  "executions",
  "targets",
  "user_grants",
  "project_grants",
  "signing_keys",
  "oidc_payloads",
  "app_keys",
  "apps",
  "project_roles",
  "projects",
  "settings_files",
  "settings",
  "idp_state_policies",
  "external_identities",
  "idps",
  "user_keys",
  "user_metadata",
  "user_secrets",
  "personal_access_tokens",
  "memberships",
  "user_search_values",
  "users",
  "user_schemas",
  "org_domains",
  "orgs",
  "instance_domains",
  "instances",
] as const;

/**
 * Deletes an instance: its projections go in one transaction, so that nothing of it is
 * reachable afterwards; its events stay. Not the caller's own instance: that would delete
 * the caller with it.
 */
export async function removeInstance(tx: Tx, actor: Actor & { ownInstanceId: string }, id: string): Promise<ObjectDetails> {
  if (id === actor.ownInstanceId) throw failedPrecondition("the instance you belong to cannot be deleted; call from another instance");
  // Waits for the writes holding the instance (holdInstance) and holds off new ones.
  await tx.selectNoFrom((eb) => eb.fn("hold_instance_exclusively", [eb.val(id)]).as("held")).execute();
  const current = await instanceRowForUpdate(tx, id, "removal");
  const appended = await appendEvents(
    tx,
    { instanceId: id, type: AGGREGATE, id },
    current.sequence,
    [{ type: "instance.removed", payload: { name: current.name } }],
    actor,
  );
  for (const table of INSTANCE_TABLES) await tx.deleteFrom(table).where("instance_id", "=", id).execute();
  forgetInstance(id);
  return instanceDetails({ id, sequence: appended.sequence, change_date: appended.createdAt });
}

/** Makes an active organization the instance's default; naming the current default again changes nothing. */
export async function setDefaultOrg(tx: Tx, actor: Actor, orgId: string): Promise<ObjectDetails> {
  const instance = await instanceRowForUpdate(tx, actor.instanceId);
  const org = await tx.selectFrom("orgs").select("state").where("instance_id", "=", actor.instanceId).where("id", "=", orgId).forShare().executeTakeFirst();
  if (!org) throw notFound(`organization ${orgId} not found`);
  if (org.state !== "active") throw failedPrecondition(`organization ${orgId} is deactivated; reactivate it first`);
  if (instance.default_org_id === orgId) return instanceDetails(instance);
  return changeInstance(tx, actor, instance, [{ type: "instance.default.org.set", payload: { orgId } }], { default_org_id: orgId });
}

async function changeInstance(tx: Tx, actor: Actor, current: InstanceRow, events: PendingEvent[], set: Updateable<InstanceTable>): Promise<ObjectDetails> {
  const aggregate = { instanceId: current.id, type: AGGREGATE, id: current.id };
  const appended = await appendAndProject(tx, aggregate, current.sequence, events, actor, {
    table: "instances",
    key: { instance_id: current.id, id: current.id },
    set,
  });
  return instanceDetails({ id: current.id, sequence: appended.sequence, change_date: appended.createdAt });
}

/**
 * The instance's row, locked against concurrent changes of it (`for no key update`; its
 * removal `for update`). Writes in the instance do not lock the row: they hold the instance
 * with an advisory lock (holdInstance), which the removal takes exclusively first.
 */
async function instanceRowForUpdate(tx: Tx, id: string, mode: "change" | "removal" = "change"): Promise<InstanceRow> {
  const query = tx.selectFrom("instances").selectAll().where("instance_id", "=", id).where("id", "=", id);
  const row = await (mode === "removal" ? query.forUpdate() : query.forNoKeyUpdate()).executeTakeFirst();
  if (!row) throw notFound(`instance ${id} not found`);
  return row;
}

/**
 * Taken first by every write in an instance (rpc/services/writes.ts) and held until it
 * commits, so that DeleteInstance (removeInstance) either waits for the write and removes its
 * rows too, or goes first and the write finds no instance. Without it a write could commit
 * rows after the removal's deletes ran. A shared advisory lock and an existence check read
 * after it (migration 0025 says why not a row lock): one prepared statement.
 */
const instanceHeld = prepared((db, p: { id: string }) => db.selectNoFrom((eb) => eb.fn<boolean>("hold_instance", [eb.val(p.id)]).as("held")));

/**
 * Queued, not awaited (store/deferred.ts): it reaches the server with the write's first
 * statement, and a missing instance fails that statement with P0404 (migration 0026), which
 * instanceGone turns into NotFound.
 */
export function holdInstance(tx: Tx, id: string): Promise<void> {
  return instanceHeld.defer(tx, { id });
}

/** What a write that found its instance gone fails with, or the error unchanged. */
export function instanceGone(error: unknown, id: string): unknown {
  return (error as { code?: unknown })?.code === "P0404" ? notFound(`instance ${id} not found`) : error;
}

async function instanceDomain(tx: Tx, id: string, domain: string) {
  const row = await tx.selectFrom("instance_domains").selectAll().where("instance_id", "=", id).where("domain", "=", domain.toLowerCase()).executeTakeFirst();
  if (!row) throw notFound(`domain ${domain} of instance ${id} not found`);
  return row;
}

async function ensureDomainsFree(tx: Tx, domains: string[], instanceId?: string): Promise<void> {
  const taken = await tx.selectFrom("instance_domains").select(["domain", "instance_id"]).where("domain", "in", domains).executeTakeFirst();
  if (taken) throw alreadyExists(`the domain ${taken.domain} belongs to ${taken.instance_id === instanceId ? "this instance already" : "another instance"}`);
}

/** Field by field: jsonb hands a stored policy back with its keys in its own order. */
function samePolicy(a: PasswordPolicyJson, b: PasswordPolicyJson | null): boolean {
  return b !== null && (Object.keys(a) as (keyof PasswordPolicyJson)[]).every((key) => a[key] === b[key]);
}
