import type { KoaContextWithOIDC, Interaction } from "oidc-provider";
import type { SettingsKind } from "../../domain/settings/kind.js";
import { loginSettingsOf } from "../../domain/settings/login.js";
import { defaultOrgOf } from "../../domain/user/login-names.js";
import type { Db } from "../../store/db.js";
import { LOGIN_PATH } from "../login/kit/paths.js";
import { requestedOrg, splitScope } from "../helpers/scopes.js";

/**
 * Where the provider sends a browser that must sign in: the instance's login UI when its login
 * settings name one (`login_ui_url`, by default PLATFORM_OIDC_LOGIN_UI_URL; an instance-level
 * setting), with `authRequest=<id>`; else the built-in pages. Consent is always the built-in pages': they grant it at once (the
 * applications are first-party), so a login UI of one's own never sees that step.
 */
export function interactionUrl(db: () => Db, instanceId: string, loginSettings: SettingsKind) {
  return async (_ctx: KoaContextWithOIDC, interaction: Interaction): Promise<string> => {
    const builtIn = `${LOGIN_PATH}/${interaction.uid}`;
    if (interaction.prompt.name === "consent") return builtIn;
    const orgId = requestedOrg(splitScope(interaction.params.scope as string | undefined)) ?? (await defaultOrgOf(db(), instanceId));
    const { loginUiUrl } = await loginSettingsOf(db(), instanceId, orgId, loginSettings);
    if (!loginUiUrl) return builtIn;
    const url = new URL(loginUiUrl);
    url.searchParams.set("authRequest", interaction.uid);
    return url.href;
  };
}
