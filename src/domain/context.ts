import { SYSTEM_STREAM } from "../store/instance-sequence.js";
import type { Owner } from "./details.js";

/** The kind of a context, as memberships and owners store it. */
type ContextType = ContextRef["type"];

/**
 * Where a membership holds: a context, or one project grant (inside the granted
 * organization), where PROJECT_GRANT_OWNER manages the user grants made under it.
 */
export type MembershipContextType = ContextType | "project_grant";

/**
 * A context of the hierarchy system > instance > organization: where reusable resources
 * and settings are defined and where requests act.
 */
export type ContextRef = { type: "system" } | { type: "instance"; instanceId: string } | { type: "org"; instanceId: string; orgId: string };

/**
 * Where a request acts; permissions of enclosing contexts apply inside it. A project grant
 * lies inside the organization it was given to.
 */
export type Scope = { system: true } | { system?: false; instanceId: string; orgId?: string; projectGrantId?: string };

export const SYSTEM_CONTEXT: ContextRef = { type: "system" };

/** How a context is stored: instance_id '' for the system, org_id '' for an instance's own rows. */
export interface ContextColumns {
  instance_id: string;
  org_id: string;
}

export function contextColumns(c: ContextRef): ContextColumns {
  return { instance_id: c.type === "system" ? SYSTEM_STREAM : c.instanceId, org_id: c.type === "org" ? c.orgId : "" };
}

export function contextFromColumns(row: ContextColumns): ContextRef {
  if (row.instance_id === SYSTEM_STREAM) return SYSTEM_CONTEXT;
  return row.org_id ? { type: "org", instanceId: row.instance_id, orgId: row.org_id } : { type: "instance", instanceId: row.instance_id };
}

export function ownerOfContext(c: ContextRef): Owner {
  return c.type === "system" ? { type: "system", id: "" } : c.type === "instance" ? { type: "instance", id: c.instanceId } : { type: "org", id: c.orgId };
}

/** Where permissions are checked for a context. */
export function scopeOfContext(c: ContextRef): Scope {
  return c.type === "system" ? { system: true } : { instanceId: c.instanceId, ...(c.type === "org" && { orgId: c.orgId }) };
}

export function parentOf(c: ContextRef): ContextRef | undefined {
  if (c.type === "org") return { type: "instance", instanceId: c.instanceId };
  if (c.type === "instance") return SYSTEM_CONTEXT;
  return undefined;
}

/** The context and its ancestors, nearest first: the order settings are resolved in. */
export function lineage(c: ContextRef): ContextRef[] {
  const chain: ContextRef[] = [];
  for (let at: ContextRef | undefined = c; at; at = parentOf(at)) chain.push(at);
  return chain;
}

export function sameContext(a: ContextRef, b: ContextRef): boolean {
  const x = contextColumns(a);
  const y = contextColumns(b);
  return x.instance_id === y.instance_id && x.org_id === y.org_id;
}

/** Whether `outer` is `inner` or encloses it. */
export function encloses(outer: ContextRef, inner: ContextRef): boolean {
  return lineage(inner).some((c) => sameContext(c, outer));
}

/** For messages: "the system", "instance 123", "organization 456". */
export function describeContext(c: ContextRef): string {
  return c.type === "system" ? "the system" : c.type === "instance" ? `instance ${c.instanceId}` : `organization ${c.orgId}`;
}
