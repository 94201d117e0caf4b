import { idpWithSecret } from "../../../domain/idp/queries.js";
import { activeOrgOfLoginDomain } from "../../../domain/org-domain/queries.js";
import { providersForLogin } from "../../../domain/idp/login-use.js";
import type { IdpView } from "../../../domain/idp/model.js";
import type { Db } from "../../../store/db.js";
import { requestedOrg, splitScope } from "../../helpers/scopes.js";
import { LOGIN_PATH } from "../kit/paths.js";
import type { Texts } from "../view/texts/index.js";
import { defaultOrgOf, userByLoginName } from "../../../domain/user/login-names.js";
import { providerButtons } from "./render.js";
import { SUPPORTED_TYPES, type StoredIdp } from "../../../upstream-idps/clients.js";

/** What the login pages know of an interaction's request. */
export interface LoginParams {
  scope?: unknown;
  login_hint?: unknown;
}

/**
 * The organization a login belongs to: the one its scope names, else the one its login hint
 * names (a user's login name, or a domain of an organization after "@"), else the instance's
 * default organization.
 */
export async function loginOrgOf(db: Db, instanceId: string, params: LoginParams): Promise<{ orgId: string; restricted: boolean }> {
  const scoped = requestedOrg(splitScope(params.scope as string | undefined));
  if (scoped) return { orgId: scoped, restricted: true };
  const hint = typeof params.login_hint === "string" ? params.login_hint.trim().slice(0, 400) : "";
  if (hint) {
    const user = await userByLoginName(db, instanceId, hint);
    if (user) return { orgId: user.orgId, restricted: false };
    const at = hint.lastIndexOf("@");
    const domainOrg = at >= 0 ? await activeOrgOfLoginDomain(db, instanceId, hint.slice(at + 1)) : undefined;
    if (domainOrg) return { orgId: domainOrg, restricted: false };
  }
  return { orgId: await defaultOrgOf(db, instanceId), restricted: false };
}

/**
 * The providers effectively active in the organization whose type this login can use, by
 * name; none while the organization's login settings turn external login off.
 */
async function activeProviders(db: Db, instanceId: string, orgId: string, id?: string): Promise<IdpView[]> {
  return (await providersForLogin(db, instanceId, orgId, id)).filter((p) => SUPPORTED_TYPES.has(p.type));
}

/** One provider with its sealed secret, when it is active in the organization. */
export async function activeProvider(db: Db, instanceId: string, orgId: string, id: string): Promise<(StoredIdp & { view: IdpView }) | undefined> {
  const [view] = await activeProviders(db, instanceId, orgId, id);
  if (!view) return undefined;
  // Providers are the system's, the instance's or an organization's; the search above kept
  // only those visible in this instance's organization.
  const row = await idpWithSecret(db, instanceId, id);
  return row && { ...row, view };
}

/** The buttons under the login-name form: one per provider active in the login's organization. */
export async function externalLoginButtons(db: Db, instanceId: string, params: LoginParams, t: Texts, csrf: string, uid: string): Promise<string> {
  const { orgId } = await loginOrgOf(db, instanceId, params);
  const providers = await activeProviders(db, instanceId, orgId);
  return providerButtons(
    t,
    `${LOGIN_PATH}/${uid}/idp/start`,
    csrf,
    providers.map((p) => ({ id: p.details.id, name: p.name })),
  );
}
