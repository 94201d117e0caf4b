import type { Selectable } from "kysely";
import type { EventTable } from "../../store/schema.js";

/**
 * Names of payload fields that could hold a secret. Commands keep secrets out of event
 * payloads already (hashes and keys live in their own tables, sealed); this is the second
 * line, so that a future payload carrying one by mistake still never leaves the service.
 * Compared without case, `_` and `-`: `client_secret` and `clientSecret` alike.
 */
const SECRET_FIELDS = new Set([
  "password",
  "passwordhash",
  "hash",
  "secret",
  "secrethash",
  "clientsecret",
  "privatekey",
  "signingkey",
  "previoussigningkey",
  "token",
  "accesstoken",
  "refreshtoken",
  "keyfile",
]);

const normalized = (name: string) => name.toLowerCase().replace(/[_-]/g, "");

/** A copy of a payload without fields named like secrets, at any depth. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([name]) => !SECRET_FIELDS.has(normalized(name)))
      .map(([name, v]) => [name, withoutSecrets(v)]),
  );
}

/**
 * The body of an event delivery, with the spec's field names (the mix of camelCase and
 * snake_case is ZITADEL's). `resourceOwner` is the organization the aggregate belongs to
 * where the event log tells it (see resourceOwnerOf), else the instance.
 */
export function eventBody(
  event: Pick<Selectable<EventTable>, "instance_id" | "aggregate_type" | "aggregate_id" | "sequence" | "event_type" | "created_at" | "creator" | "payload">,
  resourceOwner: string,
): string {
  return JSON.stringify({
    aggregateID: event.aggregate_id,
    aggregateType: event.aggregate_type,
    resourceOwner,
    instanceID: event.instance_id,
    version: "v1",
    sequence: Number(event.sequence),
    event_type: event.event_type,
    created_at: new Date(event.created_at).toISOString(),
    userID: event.creator,
    event_payload: withoutSecrets(event.payload ?? {}),
  });
}

/**
 * Events carry no owner column: an organization owns itself, an instance-level aggregate is
 * owned by the instance, and the others name their organization in their first event
 * (`orgId`, as user.*.added does); without one, the instance.
 */
export function resourceOwnerOf(aggregateType: string, aggregateId: string, instanceId: string, firstPayload: unknown): string {
  if (aggregateType === "org") return aggregateId;
  const orgId = (firstPayload as { orgId?: unknown } | null)?.orgId;
  return typeof orgId === "string" && orgId !== "" ? orgId : instanceId;
}
