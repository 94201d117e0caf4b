import type { Db, Tx } from "../../store/db.js";
import { loginSettingsOf } from "../settings/login.js";
import type { IdpView } from "./model.js";
import { searchIdps } from "./queries.js";

/**
 * The providers a person of an organization may sign in with: those effectively active in it
 * (its own, its instance's, the system's, after the state policies), none while its login
 * settings turn external login off. `id` narrows to one.
 */
export async function providersForLogin(db: Db | Tx, instanceId: string, orgId: string, id?: string): Promise<IdpView[]> {
  if (!(await loginSettingsOf(db, instanceId, orgId)).allowExternalIdp) return [];
  const { rows } = await searchIdps(
    db as Db,
    { type: "org", instanceId, orgId },
    {
      filters: [{ state: "active" }, ...(id !== undefined ? [{ id }] : [])],
      sort: "name",
      page: { offset: 0, limit: 50, asc: true },
      visibleOrgs: undefined,
    },
  );
  return rows;
}

/**
 * Whether a provider may vouch for a user of `orgId`: link to one, or sign one in through a
 * link. The user's own organization decides, not the one a login was started in, so a
 * provider of another organization (reached through a login hint naming its domain) or one
 * the user's organization switched off, or any while it turns external login off, never
 * reaches its people (docs/oidc.md, "Which users a provider reaches").
 */
export async function providerReaches(db: Db | Tx, instanceId: string, orgId: string, idpId: string): Promise<boolean> {
  return (await providersForLogin(db, instanceId, orgId, idpId)).length > 0;
}
