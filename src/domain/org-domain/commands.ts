import { appendAndProject } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import type { Appended, PendingEvent } from "../../store/events.js";
import type { OrgDomainRow, OrgRow } from "../../store/schema.js";
import type { Actor, ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition, notFound } from "../errors.js";
import { orgRowForUpdate } from "../org/row-lock.js";
import { AGGREGATE as ORG_AGGREGATE, domainLabel } from "../org/model.js";
import { validatesOrgDomains } from "../settings/domain.js";
import { domainDetails } from "./model.js";

/**
 * Claims the domain an organization is created with: `<label>.<primary domain of the
 * instance>`, with "-2", "-3"… after the label while another organization of the instance
 * has it. Each candidate is inserted with ON CONFLICT DO NOTHING, which waits for a
 * concurrent creator of the same candidate and moves on if it committed, so that
 * organizations with the same label created at once all succeed. The row's event
 * columns are set by recordGeneratedDomain once the events exist.
 */
export async function claimGeneratedDomain(tx: Tx, instanceId: string, orgId: string, orgName: string): Promise<string> {
  const primary = await tx
    .selectFrom("instance_domains")
    .select("domain")
    .where("instance_id", "=", instanceId)
    .where("is_primary", "=", true)
    .executeTakeFirstOrThrow();
  const label = domainLabel(orgName);
  const now = new Date();
  for (let n = 1; ; n++) {
    const domain = `${label}${n > 1 ? `-${n}` : ""}.${primary.domain}`;
    const claimed = await tx
      .insertInto("org_domains")
      .values({
        instance_id: instanceId,
        domain,
        org_id: orgId,
        is_primary: true,
        is_verified: true,
        is_generated: true,
        created_at: now,
        change_date: now,
        sequence: 0,
      })
      .onConflict((oc) => oc.columns(["instance_id", "domain"]).doNothing())
      .returning("domain")
      .executeTakeFirst();
    if (claimed) return domain;
  }
}

export async function recordGeneratedDomain(tx: Tx, instanceId: string, domain: string, appended: Appended): Promise<void> {
  await tx
    .updateTable("org_domains")
    .set({ created_at: appended.createdAt, change_date: appended.createdAt, sequence: appended.sequence })
    .where("instance_id", "=", instanceId)
    .where("domain", "=", domain)
    .execute();
}

/** Adds an unverified domain to an organization; a domain belongs to one organization of an instance. */
export async function addDomain(tx: Tx, actor: Actor, orgId: string, domain: string): Promise<ObjectDetails> {
  const org = await orgRowForUpdate(tx, actor.instanceId, orgId);
  const name = domain.toLowerCase();
  const taken = await findDomain(tx, actor.instanceId, name);
  if (taken) {
    throw alreadyExists(taken.org_id === orgId ? `the organization already has the domain ${name}` : `the domain ${name} belongs to another organization`);
  }
  const appended = await appendOrgEvent(tx, actor, org, { type: "org.domain.added", payload: { domain: name, generated: false, verified: false } });
  const row = {
    instance_id: actor.instanceId,
    domain: name,
    org_id: orgId,
    is_primary: false,
    is_verified: false,
    is_generated: false,
    created_at: appended.createdAt,
    change_date: appended.createdAt,
    sequence: appended.sequence,
  };
  await tx.insertInto("org_domains").values(row).execute();
  return domainDetails(row);
}

/** The primary domain forms login names and cannot be removed; make another one primary first. */
export async function removeDomain(tx: Tx, actor: Actor, domain: string): Promise<ObjectDetails> {
  const { current, org } = await domainRowsForUpdate(tx, actor.instanceId, domain);
  if (current.is_primary) throw failedPrecondition(`${current.domain} is its organization's primary domain; make another domain primary first`);
  const appended = await appendOrgEvent(tx, actor, org, { type: "org.domain.removed", payload: { domain: current.domain } });
  await tx.deleteFrom("org_domains").where("instance_id", "=", actor.instanceId).where("domain", "=", current.domain).execute();
  return domainDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/**
 * Setting the primary domain again succeeds without an event. While the instance's domain
 * settings say validate_org_domains, only a verified domain becomes primary: the primary
 * domain forms every login name of the organization.
 */
export async function setPrimaryDomain(tx: Tx, actor: Actor, domain: string): Promise<ObjectDetails> {
  const { current, org } = await domainRowsForUpdate(tx, actor.instanceId, domain);
  if (current.is_primary) return domainDetails(current);
  if (!current.is_verified && (await validatesOrgDomains(tx, actor.instanceId))) {
    throw failedPrecondition(
      `${current.domain} is not verified, and the instance's domain settings (validate_org_domains) let only verified domains become primary; verify it first (_generate_validation, _validate)`,
    );
  }
  const appended = await appendOrgEvent(tx, actor, org, { type: "org.domain.primary.set", payload: { domain: current.domain } });
  const base = tx.updateTable("org_domains").where("instance_id", "=", actor.instanceId).where("org_id", "=", current.org_id);
  // Two statements: the partial unique index allows one primary per organization at any moment.
  await base.set({ is_primary: false, change_date: appended.createdAt, sequence: appended.sequence }).where("is_primary", "=", true).execute();
  await base.set({ is_primary: true, change_date: appended.createdAt, sequence: appended.sequence }).where("domain", "=", current.domain).execute();
  return domainDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/** Domain events live on the organization's aggregate: its projection row follows them. */
export async function appendOrgEvent(tx: Tx, actor: Actor, org: OrgRow, event: PendingEvent): Promise<Appended> {
  const aggregate = { instanceId: actor.instanceId, type: ORG_AGGREGATE, id: org.id, orgId: org.id };
  return appendAndProject(tx, aggregate, org.sequence, [event], actor, { table: "orgs", key: { instance_id: actor.instanceId, id: org.id } });
}

function findDomain(tx: Tx, instanceId: string, domain: string) {
  return tx.selectFrom("org_domains").selectAll().where("instance_id", "=", instanceId).where("domain", "=", domain).executeTakeFirst();
}

/** The domain, read again under its organization's lock, which every change of it takes. */
export async function domainRowsForUpdate(tx: Tx, instanceId: string, domain: string): Promise<{ current: OrgDomainRow; org: OrgRow }> {
  const name = domain.toLowerCase();
  const seen = await findDomain(tx, instanceId, name);
  const org = seen && (await orgRowForUpdate(tx, instanceId, seen.org_id));
  const current = org && (await findDomain(tx, instanceId, name));
  if (!org || !current || current.org_id !== org.id) throw notFound(`domain ${domain} not found`);
  return { current, org };
}
