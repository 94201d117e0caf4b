import { hashToken, newOpaqueToken, randomAlphanumeric } from "../../crypto/tokens.js";
import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import type { Actor, ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition, notFound } from "../errors.js";
import { projectRowForUpdate } from "../project/rows.js";
import { AGGREGATE, appDetails, configOf, usesSecret, type ApiConfig, type AppConfig, type AppRow, type OidcConfig } from "./model.js";
import { refuseConsoleChange } from "./console-guard.js";
import { checkOidcConfig } from "./oidc-rules.js";

function checkConfig(config: AppConfig, onIssuer = false): void {
  if (config.type === "oidc") checkOidcConfig(config.oidc, onIssuer);
}

const stored = (config: AppConfig) => JSON.stringify(config.type === "oidc" ? config.oidc : config.api);

async function ensureNameFree(tx: Tx, instanceId: string, projectId: string, name: string, except?: string): Promise<void> {
  let query = tx
    .selectFrom("apps")
    .select("id")
    .where("instance_id", "=", instanceId)
    .where("project_id", "=", projectId)
    .where((eb) => eb(eb.fn("lower", [eb.ref("name")]), "=", eb.fn("lower", [eb.val(name)])));
  if (except) query = query.where("id", "!=", except);
  if (await query.executeTakeFirst()) throw alreadyExists(`an application named "${name}" already exists in project ${projectId}`);
}

/** A new secret for a method that presents one: returned once, kept as its SHA-256. */
function secretFor(config: AppConfig): { secret?: string; hash: string | null } {
  if (!usesSecret(config)) return { hash: null };
  const secret = newOpaqueToken();
  return { secret, hash: hashToken(secret) };
}

/**
 * Creates an application in a project (share-locked: a concurrent deletion of the project
 * waits and takes the application with it). The client ID is random and public; the
 * secret, for BASIC and POST, is shown only in the answer.
 */
export async function addApp(tx: Tx, actor: Actor, projectId: string, input: { name: string; config: AppConfig; redirectsOnIssuer?: boolean }) {
  const project = await projectRowForUpdate(tx, actor.instanceId, projectId, "share");
  checkConfig(input.config, input.redirectsOnIssuer);
  await ensureNameFree(tx, actor.instanceId, projectId, input.name);
  const id = newId();
  const clientId = randomAlphanumeric(24);
  const { secret, hash } = secretFor(input.config);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: project.org_id },
    0,
    [{ type: "app.added", payload: { projectId, name: input.name, ...input.config, clientId } }],
    actor,
  );
  const row = {
    instance_id: actor.instanceId,
    id,
    org_id: project.org_id,
    project_id: projectId,
    name: input.name,
    type: input.config.type,
    config: stored(input.config),
    client_id: clientId,
    secret_hash: hash,
    ...createdBy(appended),
  };
  await tx.insertInto("apps").values(row).execute();
  return { details: appDetails(row), clientId, clientSecret: secret };
}

export async function appRowForUpdate(tx: Tx, instanceId: string, id: string): Promise<AppRow> {
  const row = await tx.selectFrom("apps").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).forUpdate().executeTakeFirst();
  if (!row) throw notFound(`application ${id} not found`);
  return row;
}

async function changeApp(
  tx: Tx,
  actor: Actor,
  current: AppRow,
  event: { type: string; payload: unknown },
  set: Partial<Pick<AppRow, "name" | "state" | "secret_hash">> & { config?: string },
): Promise<ObjectDetails> {
  const aggregate = { instanceId: actor.instanceId, type: AGGREGATE, id: current.id, orgId: current.org_id };
  const appended = await appendAndProject(tx, aggregate, current.sequence, [event], actor, {
    table: "apps",
    key: { instance_id: actor.instanceId, id: current.id },
    set,
  });
  return appDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

export interface AppPatch {
  name?: string;
  oidc?: Partial<OidcConfig>;
  api?: Partial<ApiConfig>;
}

/**
 * Changes what is given; the resulting configuration is checked whole. A change of
 * authentication method to one with a secret makes a new secret (returned once); to one
 * without, the secret goes. A patch that changes nothing succeeds without an event.
 */
export async function patchApp(tx: Tx, actor: Actor, id: string, patch: AppPatch): Promise<{ details: ObjectDetails; clientSecret?: string }> {
  const current = await appRowForUpdate(tx, actor.instanceId, id);
  await refuseConsoleChange(tx, actor.instanceId, { appId: id });
  const before = configOf(current);
  if (patch.oidc && before.type !== "oidc") throw failedPrecondition(`application ${id} is an API application: it has no OpenID Connect configuration`);
  if (patch.api && before.type !== "api") throw failedPrecondition(`application ${id} is an OpenID Connect application: it has no API configuration`);
  const after: AppConfig =
    before.type === "oidc" ? { type: "oidc", oidc: { ...before.oidc, ...patch.oidc } } : { type: "api", api: { ...before.api, ...patch.api } };
  const name = patch.name !== undefined && patch.name !== current.name ? patch.name : undefined;
  const configChanged = stored(after) !== stored(before);
  if (name === undefined && !configChanged) return { details: appDetails(current) };
  if (configChanged) checkConfig(after);
  if (name !== undefined) await ensureNameFree(tx, actor.instanceId, current.project_id, name, id);
  const secretNeeded = usesSecret(after) && current.secret_hash === null;
  const { secret, hash } = secretNeeded ? secretFor(after) : { secret: undefined, hash: usesSecret(after) ? current.secret_hash : null };
  const details = await changeApp(
    tx,
    actor,
    current,
    {
      type: "app.changed",
      payload: { ...(name !== undefined && { name }), ...(configChanged && after), ...(hash !== current.secret_hash && { secretChanged: true }) },
    },
    { ...(name !== undefined && { name }), ...(configChanged && { config: stored(after) }), secret_hash: hash },
  );
  return { details, clientSecret: secret };
}

export async function setAppState(tx: Tx, actor: Actor, id: string, state: "active" | "inactive"): Promise<ObjectDetails> {
  const current = await appRowForUpdate(tx, actor.instanceId, id);
  await refuseConsoleChange(tx, actor.instanceId, { appId: id });
  if (current.state === state) throw failedPrecondition(`application ${id} is already ${state === "active" ? "active" : "deactivated"}`);
  return changeApp(tx, actor, current, { type: state === "active" ? "app.reactivated" : "app.deactivated", payload: {} }, { state });
}

export async function regenerateAppSecret(tx: Tx, actor: Actor, id: string): Promise<{ details: ObjectDetails; clientSecret: string }> {
  const current = await appRowForUpdate(tx, actor.instanceId, id);
  const config = configOf(current);
  if (!usesSecret(config)) throw failedPrecondition(`application ${id} authenticates without a client secret; change its auth_method_type first`);
  const { secret, hash } = secretFor(config);
  const details = await changeApp(tx, actor, current, { type: "app.secret.regenerated", payload: {} }, { secret_hash: hash });
  return { details, clientSecret: secret! };
}

export async function removeApp(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  const current = await appRowForUpdate(tx, actor.instanceId, id);
  await refuseConsoleChange(tx, actor.instanceId, { appId: id });
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: current.org_id },
    current.sequence,
    [{ type: "app.removed", payload: { name: current.name } }],
    actor,
  );
  await tx.deleteFrom("app_keys").where("instance_id", "=", actor.instanceId).where("app_id", "=", id).execute();
  await tx.deleteFrom("apps").where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  return appDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}
