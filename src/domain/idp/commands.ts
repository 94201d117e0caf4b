import type { SecretBox } from "../../crypto/encryption.js";
import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import type { Editor } from "../../store/editor.js";
import { lastEvent } from "../../store/event-reads.js";
import { newId } from "../../store/ids.js";
import { AGGREGATE, type IdpRow, ownerOfIdp, POLICY_AGGREGATE, secretOf, type StatePolicyName } from "./model.js";
import { requireUsableConfig, requireUsableSecret } from "./secrets.js";
import { contextColumns, describeContext, encloses, ownerOfContext, sameContext, type ContextRef } from "../context.js";
import type { ObjectDetails } from "../details.js";
import { requireExisting } from "../existence.js";
import { failedPrecondition, notFound } from "../errors.js";
import { requireSecretForNewAim } from "../secret-aim.js";

export interface NewIdp {
  type: string;
  name: string;
  statePolicy: StatePolicyName;
  options: Record<string, unknown>;
  /** The type's configuration without its secret. */
  config: Record<string, unknown>;
  /** The type's secret (model.ts secretOf: Apple's private key, the others' client secret); none for a type that makes its own. */
  clientSecret: string | undefined;
}

export interface IdpPatch {
  name?: string;
  statePolicy?: StatePolicyName;
  options?: Record<string, unknown>;
  /** Configuration properties to replace; the others keep their value. */
  config?: Record<string, unknown>;
  clientSecret?: string;
}

function detailsOf(row: Pick<IdpRow, "id" | "instance_id" | "org_id">, sequence: number, changeDate: Date): ObjectDetails {
  return { id: row.id, sequence, changeDate, owner: ownerOfContext(ownerOfIdp(row)) };
}

/** Defines a provider in a context, which owns it. Secrets are sealed and never part of an event. */
export async function addIdp(tx: Tx, creator: Editor, owner: ContextRef, input: NewIdp, box: SecretBox): Promise<ObjectDetails> {
  // An organization deleted meanwhile would otherwise be left a provider nobody can reach.
  if (owner.type === "org") await requireExisting(tx, "orgs", owner.instanceId, owner.orgId);
  requireUsableConfig(input.type, input.config);
  const { generate } = secretOf(input.type);
  const clientSecret = generate ? await generate() : input.clientSecret;
  if (clientSecret === undefined) throw new Error(`identity provider type ${input.type} needs its secret`);
  requireUsableSecret(input.type, clientSecret);
  const id = newId();
  const columns = contextColumns(owner);
  const { clientSecret: _given, ...described } = input;
  const appended = await appendEvents(
    tx,
    { instanceId: columns.instance_id, type: AGGREGATE, id, orgId: columns.org_id },
    0,
    [{ type: "idp.added", payload: described }],
    creator,
  );
  await tx
    .insertInto("idps")
    .values({
      id,
      ...columns,
      owner_type: owner.type,
      type: input.type,
      name: input.name,
      state_policy: input.statePolicy,
      options: JSON.stringify(input.options),
      config: JSON.stringify(input.config),
      client_secret: box.encrypt(clientSecret),
      ...createdBy(appended),
    })
    .execute();
  return detailsOf({ id, ...columns }, appended.sequence, appended.createdAt);
}

async function idpRowForUpdate(tx: Tx, id: string): Promise<IdpRow> {
  const row = await tx.selectFrom("idps").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
  if (!row) throw notFound(`identity provider ${id} not found`);
  return row;
}

/**
 * Changes a provider as the asked context may: its owner anything, a context that reuses it
 * only its own state policy. A patch that changes nothing succeeds without an event.
 */
export async function patchIdp(tx: Tx, creator: Editor, id: string, asked: ContextRef, patch: IdpPatch, box: SecretBox, type?: string): Promise<ObjectDetails> {
  const row = await idpRowForUpdate(tx, id);
  if (type !== undefined && row.type !== type) throw notFound(`identity provider ${id} is not of type ${type}`);
  const owner = ownerOfIdp(row);
  if (sameContext(owner, asked)) return patchOwned(tx, creator, row, patch, box);
  if (!encloses(owner, asked)) {
    throw failedPrecondition(`identity provider ${id} belongs to ${describeContext(owner)}; change it there`);
  }
  const { statePolicy, ...configuration } = patch;
  if (Object.values(configuration).some((v) => v !== undefined)) {
    throw failedPrecondition(
      `identity provider ${id} is configured in ${describeContext(owner)}; in ${describeContext(asked)} only its state policy can change`,
    );
  }
  if (statePolicy === undefined) return detailsOf(row, row.sequence, row.change_date);
  return setChildPolicy(tx, creator, row, asked, statePolicy);
}

/**
 * Stored JSON as compared: keys sorted (jsonb reorders them) and proto3 defaults (false, "",
 * empty lists) left out, as a read turns them back into the same message.
 */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined && v !== null && v !== false && v !== "" && !(Array.isArray(v) && v.length === 0))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, canonical(v)]),
  );
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

async function patchOwned(tx: Tx, creator: Editor, row: IdpRow, patch: IdpPatch, box: SecretBox): Promise<ObjectDetails> {
  const changed: Record<string, unknown> = {};
  if (patch.name !== undefined && patch.name !== row.name) changed.name = patch.name;
  if (patch.statePolicy !== undefined && patch.statePolicy !== row.state_policy) changed.statePolicy = patch.statePolicy;
  if (patch.options && !sameJson(patch.options, row.options)) changed.options = patch.options;
  const config = patch.config && { ...row.config, ...patch.config };
  if (config) requireUsableConfig(row.type, config);
  if (config && patch.clientSecret === undefined) requireSecretForNewAim(secretOf(row.type).aim, row.config, config);
  if (patch.clientSecret !== undefined) requireUsableSecret(row.type, patch.clientSecret);
  if (config && !sameJson(config, row.config)) changed.config = config;
  // Whether a secret is the same cannot be told without opening the old one; a given secret is a change.
  if (patch.clientSecret !== undefined) changed.clientSecretChanged = true;
  if (Object.keys(changed).length === 0) return detailsOf(row, row.sequence, row.change_date);
  const aggregate = { instanceId: row.instance_id, type: AGGREGATE, id: row.id, orgId: row.org_id };
  const appended = await appendAndProject(tx, aggregate, row.sequence, [{ type: "idp.changed", payload: changed }], creator, {
    table: "idps",
    key: { id: row.id },
    set: {
      ...(changed.name !== undefined && { name: patch.name }),
      ...(changed.statePolicy !== undefined && { state_policy: patch.statePolicy }),
      ...(changed.options !== undefined && { options: JSON.stringify(patch.options) }),
      ...(changed.config !== undefined && { config: JSON.stringify(config) }),
      ...(patch.clientSecret !== undefined && { client_secret: box.encrypt(patch.clientSecret) }),
    },
  });
  return detailsOf(row, appended.sequence, appended.createdAt);
}

/** A child context's own policy; INHERIT removes it. The provider's row lock orders concurrent changes. */
async function setChildPolicy(tx: Tx, creator: Editor, row: IdpRow, asked: ContextRef, policy: StatePolicyName): Promise<ObjectDetails> {
  // An organization deleted meanwhile would otherwise keep a policy nobody can remove; the
  // share lock makes a concurrent deletion wait and then remove this policy too.
  if (asked.type === "org") await requireExisting(tx, "orgs", asked.instanceId, asked.orgId);
  const at = contextColumns(asked);
  const where = { idp_id: row.id, ...at };
  const current = await tx
    .selectFrom("idp_state_policies")
    .select("policy")
    .where("idp_id", "=", row.id)
    .where("instance_id", "=", at.instance_id)
    .where("org_id", "=", at.org_id)
    .executeTakeFirst();
  // The policy is the asked context's, not the provider owner's: its events go to that organization's owners.
  const aggregate = { instanceId: at.instance_id, type: POLICY_AGGREGATE, id: row.id, orgId: at.org_id };
  const last = await lastEvent(tx, aggregate);
  // Unchanged: the policy aggregate's details, as a change would have answered.
  if ((current?.policy ?? "inherit") === policy) return detailsOf(row, last?.sequence ?? 0, last?.createdAt ?? row.change_date);
  const appended = await appendEvents(tx, aggregate, last?.sequence ?? 0, [{ type: "idp.policy.set", payload: { orgId: at.org_id, policy } }], creator);
  if (policy === "inherit") {
    await tx.deleteFrom("idp_state_policies").where("idp_id", "=", row.id).where("instance_id", "=", at.instance_id).where("org_id", "=", at.org_id).execute();
  } else {
    await tx
      .insertInto("idp_state_policies")
      .values({ ...where, policy, change_date: appended.createdAt })
      .onConflict((oc) => oc.columns(["idp_id", "instance_id", "org_id"]).doUpdateSet({ policy, change_date: appended.createdAt }))
      .execute();
  }
  return detailsOf(row, appended.sequence, appended.createdAt);
}

/** Deletes a provider with every child context's policy for it; only its owner may. */
export async function removeIdp(tx: Tx, creator: Editor, id: string, asked: ContextRef): Promise<ObjectDetails> {
  const row = await idpRowForUpdate(tx, id);
  const owner = ownerOfIdp(row);
  if (!sameContext(owner, asked)) {
    throw failedPrecondition(`identity provider ${id} belongs to ${describeContext(owner)}; only there can it be deleted`);
  }
  const appended = await appendEvents(
    tx,
    { instanceId: row.instance_id, type: AGGREGATE, id, orgId: row.org_id },
    row.sequence,
    [{ type: "idp.removed", payload: { name: row.name } }],
    creator,
  );
  await tx.deleteFrom("idp_state_policies").where("idp_id", "=", id).execute();
  // A system provider is used by every instance: its links go everywhere.
  await tx
    .deleteFrom("external_identities")
    .where("idp_id", "=", id)
    .$if(row.instance_id !== "", (q) => q.where("instance_id", "=", row.instance_id))
    .execute();
  await tx.deleteFrom("idps").where("id", "=", id).execute();
  return detailsOf(row, appended.sequence, appended.createdAt);
}

/** Part of removing an organization: its providers and its policies for providers above it. */
export async function removeOrgIdps(tx: Tx, instanceId: string, orgId: string): Promise<void> {
  await tx.deleteFrom("idp_state_policies").where("instance_id", "=", instanceId).where("org_id", "=", orgId).execute();
  await tx
    .deleteFrom("external_identities")
    .where("instance_id", "=", instanceId)
    .where("idp_id", "in", tx.selectFrom("idps").select("id").where("instance_id", "=", instanceId).where("org_id", "=", orgId))
    .execute();
  await tx.deleteFrom("idps").where("instance_id", "=", instanceId).where("org_id", "=", orgId).execute();
}
