import { loginSettingsOf, type LoginSettings } from "../../../domain/settings/login.js";
import { withRequestedAcr } from "../../helpers/acr.js";
import type { LoginContext, SignInStep } from "./context.js";
import { escapeHtml } from "../view/render.js";
import type { Texts } from "../view/texts/index.js";
import { defaultOrgOf } from "../../../domain/user/login-names.js";

/** The organization a login is in: the scope's, else the instance's default organization. */
export async function loginOrgOf(c: LoginContext, requestedOrg: string | undefined): Promise<string> {
  return requestedOrg ?? (await defaultOrgOf(c.db, c.instanceId));
}

/** The login settings of an organization with this process's configured lockout default. */
export function settingsOf(c: LoginContext, orgId: string): Promise<LoginSettings> {
  return loginSettingsOf(c.db, c.instanceId, orgId, c.guards.loginSettings);
}

/**
 * The login settings one interaction's sign-in follows: the organization's, with a second
 * factor forced when the request accepts only multi-factor (`acr_values`, acr.ts). Every step
 * that decides whether a second factor is due reads them here, so none disagrees.
 */
export async function signInSettingsOf(s: Pick<SignInStep, "c" | "details">, orgId: string): Promise<LoginSettings> {
  return withRequestedAcr(await settingsOf(s.c, orgId), s.details.params);
}

/** The "Register" link under the login name form, when the login's organization allows it. */
export async function registerLink(c: LoginContext, requestedOrg: string | undefined, base: string, t: Texts): Promise<string> {
  const settings = await settingsOf(c, await loginOrgOf(c, requestedOrg));
  return settings.allowRegister ? `<p><a href="${escapeHtml(`${base}/register`)}">${escapeHtml(t.registerLink)}</a></p>` : "";
}
