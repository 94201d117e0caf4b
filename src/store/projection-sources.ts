/**
 * The aggregates whose events change each searched projection (by the aggregate type its
 * search reports on). Projections are written in their events' transaction, so a search's
 * ListDetails report the newest of these events: its own aggregate's, and those of the
 * aggregates whose removal deletes its rows without an event of their own. An organization's
 * removal takes its projects (with their apps, keys and grants), its users (with their
 * tokens, keys, memberships and grants) and its identity providers; a user's removal its
 * tokens, keys, memberships and grants; a project's its apps, app keys and grants; an app's its keys;
 * a project grant's the user grants and memberships made under it. A project search shows
 * the projects granted to an organization too, so it follows project grants.
 */
const CHANGED_BY: Readonly<Record<string, readonly string[]>> = {
  user: ["user", "org"],
  pat: ["pat", "user", "org"],
  user_key: ["user_key", "user", "org"],
  membership: ["membership", "user", "org", "project_grant", "project"],
  user_grant: ["user_grant", "user", "project", "project_grant", "org"],
  project: ["project", "project_grant", "org"],
  project_grant: ["project_grant", "project", "org"],
  user_schema: ["user_schema"],
  app: ["app", "project", "org"],
  app_key: ["app_key", "app", "project", "org"],
  idp: ["idp", "org"],
};

export function changedBy(aggregateType: string): readonly string[] {
  return CHANGED_BY[aggregateType] ?? [aggregateType];
}
