import { activeProjectIds } from "../../domain/project/queries.js";
import type { Db } from "../../store/db.js";

/** The standard scopes of OpenID Connect Core 1.0, section 5.4, and refresh tokens. */
export const STANDARD_SCOPES = ["openid", "profile", "email", "phone", "address", "offline_access"] as const;

/** A project's audience scope; the project `platform` stands for this service's own APIs. */
const PROJECT_AUDIENCE = /^urn:platform:iam:org:project:id:([^:\s]{1,200}):aud$/;
const ROLE = /^urn:platform:iam:org:project:role:([^\s]{1,200})$/;
const ORG = /^urn:platform:iam:org:id:([^:\s]{1,200})$/;

/** The audience of tokens for the resource and settings APIs of this service. */
export const PLATFORM_AUDIENCE = "platform";

export function splitScope(scope: string | undefined): string[] {
  return [...new Set((scope ?? "").split(" ").filter(Boolean))];
}

/** Whether a scope means anything here; others are dropped, as the provider drops unknown ones. */
export function isKnownScope(scope: string): boolean {
  return (STANDARD_SCOPES as readonly string[]).includes(scope) || PROJECT_AUDIENCE.test(scope) || ROLE.test(scope) || ORG.test(scope);
}

/** The role keys a scope list asks for. */
export function requestedRoles(scopes: readonly string[]): string[] {
  return scopes.flatMap((s) => ROLE.exec(s)?.[1] ?? []);
}

/** The organization a scope list restricts the login to, if any. */
export function requestedOrg(scopes: readonly string[]): string | undefined {
  return scopes.map((s) => ORG.exec(s)?.[1]).find((id) => id !== undefined);
}

/** The projects a scope list asks to be in the audience. */
export function requestedProjects(scopes: readonly string[]): string[] {
  return scopes.flatMap((s) => PROJECT_AUDIENCE.exec(s)?.[1] ?? []);
}

/**
 * A token's audience: the client it was issued to, its project, and the projects its scopes
 * name that exist in the instance (`platform` for this service). Scopes of projects that do
 * not exist are dropped from the granted scope as well.
 */
export async function audienceAndScope(
  db: Db,
  instanceId: string,
  client: { clientId: string; projectId?: string },
  scopes: readonly string[],
  /** Cached per process until an access change (lookups.ts); without it, one statement. */
  lookups?: { activeProjects(db: Db, instanceId: string, ids: readonly string[]): Promise<Set<string>> },
): Promise<{ aud: string[]; scopes: string[] }> {
  const asked = requestedProjects(scopes).filter((id) => id !== PLATFORM_AUDIENCE);
  const existing =
    asked.length === 0 ? new Set<string>() : await (lookups ? lookups.activeProjects(db, instanceId, asked) : activeProjectIds(db, instanceId, asked));
  const kept = scopes.filter((s) => {
    const project = PROJECT_AUDIENCE.exec(s)?.[1];
    return project === undefined || project === PLATFORM_AUDIENCE || existing.has(project);
  });
  const aud = [client.clientId, ...(client.projectId ? [client.projectId] : []), ...requestedProjects(kept)];
  return { aud: [...new Set(aud)], scopes: kept };
}
