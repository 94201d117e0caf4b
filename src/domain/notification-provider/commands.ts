import type { SecretBox } from "../../crypto/encryption.js";
import { randomAlphanumeric } from "../../crypto/tokens.js";
import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import type { PendingEvent } from "../../store/events.js";
import { newId } from "../../store/ids.js";
import {
  AGGREGATES,
  checkKind,
  configOf,
  mergedConfig,
  nameOf,
  type ProviderFamily,
  type ProviderPatch,
  type ProviderSpec,
  SECRET_AIMS,
  settingsOf,
} from "./model.js";
import type { NotificationProviderRow } from "../../store/schema.js";
import { SIGNING_KEY_LENGTH } from "../action/target/model.js";
import { instanceOwnedDetails, type Actor, type ObjectDetails } from "../details.js";
import { failedPrecondition, invalidArgument, notFound } from "../errors.js";
import { nudgeWaiting } from "../notification/commands.js";
import { requireSecretForNewAim } from "../secret-aim.js";

/**
 * Secrets are sealed before they are stored and never part of an event: events say only
 * that one is set or changed.
 */
export async function createProvider(tx: Tx, actor: Actor, family: ProviderFamily, spec: ProviderSpec, box: SecretBox) {
  checkKind(family, spec.config.kind);
  requireSecret(spec.config.kind, spec.secret);
  const id = newId();
  const signingKey = spec.config.kind === "http" ? randomAlphanumeric(SIGNING_KEY_LENGTH) : undefined;
  const settings = settingsOf(spec.config);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATES[family], id },
    0,
    [
      {
        type: `${AGGREGATES[family]}.added`,
        payload: { description: spec.description, kind: spec.config.kind, config: settings, secretSet: Boolean(spec.secret) },
      },
    ],
    actor,
  );
  const row = {
    instance_id: actor.instanceId,
    id,
    family,
    kind: spec.config.kind,
    description: spec.description,
    state: "inactive" as const,
    config: JSON.stringify(settings),
    secret: spec.secret ? box.encrypt(spec.secret) : null,
    signing_key: signingKey ? box.encrypt(signingKey) : null,
    ...createdBy(appended),
  };
  await tx.insertInto("notification_providers").values(row).execute();
  return { details: instanceOwnedDetails(row), signingKey };
}

/** A patch that changes nothing succeeds without an event. */
export async function patchProvider(
  tx: Tx,
  actor: Actor,
  family: ProviderFamily,
  id: string,
  patch: ProviderPatch,
  box: SecretBox,
): Promise<{ details: ObjectDetails; signingKey?: string }> {
  const current = await providerRowForUpdate(tx, actor.instanceId, family, id);
  const before = configOf(current);
  if (patch.config) checkKind(family, patch.config.kind);
  const config = patch.config ? mergedConfig(before, patch.config) : before;
  const kindChanged = config.kind !== before.kind;
  // A secret belongs to its kind: one that changes kind keeps none it is not given.
  const secret = patch.secret !== undefined ? patch.secret || null : kindChanged ? null : undefined;
  if (kindChanged) requireSecret(config.kind, secret ?? undefined);
  if (patch.regenerateSigningKey && config.kind !== "http")
    throw failedPrecondition(`only an http provider has a signing key; ${id} is of kind ${config.kind}`);
  // A kind holds one secret at most: the password or token, or the signing key.
  const renewed = secret !== undefined || patch.regenerateSigningKey === true;
  if (!kindChanged && !renewed && (current.secret !== null || current.signing_key !== null)) requireSecretForNewAim(SECRET_AIMS[config.kind], before, config);
  const newKey = config.kind === "http" && (kindChanged || patch.regenerateSigningKey) ? randomAlphanumeric(SIGNING_KEY_LENGTH) : undefined;

  const changed: Record<string, unknown> = {};
  if (patch.description !== undefined && patch.description !== current.description) changed.description = patch.description;
  if (JSON.stringify(sorted(config)) !== JSON.stringify(sorted(before))) Object.assign(changed, { kind: config.kind, config: settingsOf(config) });
  // Whether a secret is the same cannot be told without opening the old one: a given one is a change.
  if (secret !== undefined && (secret !== null || current.secret !== null)) changed.secretChanged = true;
  const events: PendingEvent[] = [];
  if (Object.keys(changed).length > 0) events.push({ type: `${AGGREGATES[family]}.changed`, payload: changed });
  if (newKey && !kindChanged) events.push({ type: `${AGGREGATES[family]}.signing_key.regenerated`, payload: {} });
  if (events.length === 0) return { details: instanceOwnedDetails(current) };

  const appended = await appendAndProject(tx, { instanceId: actor.instanceId, type: AGGREGATES[family], id }, current.sequence, events, actor, {
    table: "notification_providers",
    key: { instance_id: actor.instanceId, id },
    set: {
      ...(changed.description !== undefined && { description: patch.description }),
      ...(changed.config !== undefined && { kind: config.kind, config: JSON.stringify(settingsOf(config)) }),
      ...(secret !== undefined && { secret: secret === null ? null : box.encrypt(secret) }),
      ...(newKey !== undefined ? { signing_key: box.encrypt(newKey) } : kindChanged && { signing_key: null }),
    },
  });
  const details = instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
  return newKey ? { details, signingKey: newKey } : { details };
}

export async function deleteProvider(tx: Tx, actor: Actor, family: ProviderFamily, id: string): Promise<ObjectDetails> {
  const current = await providerRowForUpdate(tx, actor.instanceId, family, id);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATES[family], id },
    current.sequence,
    [{ type: `${AGGREGATES[family]}.removed`, payload: { description: current.description } }],
    actor,
  );
  await tx.deleteFrom("notification_providers").where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  return instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/**
 * Makes one provider the family's active one and the one active before inactive. Every
 * provider of the family is locked first, in one order: two activations at once run one
 * after the other, and the second sees (and deactivates) what the first activated.
 */
export async function activateProvider(tx: Tx, actor: Actor, family: ProviderFamily, id: string): Promise<ObjectDetails> {
  const rows = await tx
    .selectFrom("notification_providers")
    .selectAll()
    .where("instance_id", "=", actor.instanceId)
    .where("family", "=", family)
    .orderBy("id")
    .forUpdate()
    .execute();
  const target = rows.find((row) => row.id === id);
  if (!target) throw notFound(`${nameOf(family)} ${id} not found`);
  if (target.state === "active") return instanceOwnedDetails(target);
  for (const previous of rows.filter((row) => row.state === "active")) {
    await setState(tx, actor, previous, "inactive", { replacedBy: id });
  }
  // Messages that waited for a provider (or backed off from the one replaced) go out now.
  await nudgeWaiting(tx, actor.instanceId, family === "smtp" ? "email" : "sms");
  return setState(tx, actor, target, "active", {});
}

export async function deactivateProvider(tx: Tx, actor: Actor, family: ProviderFamily, id: string): Promise<ObjectDetails> {
  const current = await providerRowForUpdate(tx, actor.instanceId, family, id);
  if (current.state === "inactive") return instanceOwnedDetails(current);
  return setState(tx, actor, current, "inactive", {});
}

async function setState(
  tx: Tx,
  actor: Actor,
  row: NotificationProviderRow,
  state: "active" | "inactive",
  payload: Record<string, unknown>,
): Promise<ObjectDetails> {
  const type = `${AGGREGATES[row.family]}.${state === "active" ? "activated" : "deactivated"}`;
  const appended = await appendAndProject(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATES[row.family], id: row.id },
    row.sequence,
    [{ type, payload }],
    actor,
    {
      table: "notification_providers",
      key: { instance_id: actor.instanceId, id: row.id },
      set: { state },
    },
  );
  return instanceOwnedDetails({ ...row, sequence: appended.sequence, change_date: appended.createdAt });
}

/** A provider of the other family is not found here either: its ID names nothing at this path. */
async function providerRowForUpdate(tx: Tx, instanceId: string, family: ProviderFamily, id: string): Promise<NotificationProviderRow> {
  const row = await tx
    .selectFrom("notification_providers")
    .selectAll()
    .where("instance_id", "=", instanceId)
    .where("family", "=", family)
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw notFound(`${nameOf(family)} ${id} not found`);
  return row;
}

function requireSecret(kind: string, secret: string | undefined): void {
  if (kind === "twilio" && !secret) throw invalidArgument("a Twilio provider needs its token");
}

/** Stored JSON as compared: jsonb reorders keys. */
function sorted(value: object): string[] {
  return Object.entries(value)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`);
}
