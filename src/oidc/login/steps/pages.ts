import { createHmac } from "node:crypto";
import type Provider from "oidc-provider";
import { checkSignInPassword } from "../../../domain/user/password-check.js";
import type { NodeRequest, NodeResponse } from "../../../http/respond.js";
import { OAuthError, readForm } from "../../endpoints/oauth-response.js";
import { requestedOrg, splitScope } from "../../helpers/scopes.js";
import { sameToken } from "../kit/form-token.js";
import { loginLanguage } from "../view/language.js";
import { LOGIN_PATH } from "../kit/paths.js";
import { errorBody, fieldError, forgotPasswordLink, loginNameForm, passwordForm, shownLoginName, type FormError } from "../view/render.js";
import { fallbackFrame, lookOf } from "../view/look.js";
import { TEXTS } from "../view/texts/index.js";
import { defaultOrgOf, userByLoginName } from "../../../domain/user/login-names.js";
import { externalLoginButtons } from "../external/providers.js";
import type { Interaction, LoginContext, PromptStep } from "../kit/context.js";
import { continueSignIn } from "./sign-in.js";
import { registerLink, settingsOf } from "../kit/org-settings.js";
import { promptSteps } from "./prompts.js";
import { resumeSignIn } from "./select-account.js";
import { otherWaysIn, passkeySignInForm } from "./passkey-sign-in.js";
import { sendPage } from "../view/send-page.js";
import { recordSignIn } from "../kit/page-origin.js";
import { stateRefusal } from "../../../domain/audit/sign-ins.js";
import { refusedTry } from "../kit/rate-limit.js";

/**
 * The login pages of an interaction the provider started (`interactions.url`): login name,
 * then password; consent is given by the service itself (its applications are first-party,
 * as in ZITADEL). Plain forms without scripts; each carries a token bound to the
 * interaction, whose cookie the provider sets SameSite=Lax and checks on every step.
 */
export async function loginPages(req: NodeRequest, res: NodeResponse, c: LoginContext): Promise<void> {
  const path = (req.url ?? "/").split("?", 1)[0]!;
  const [uid, step, ...rest] = path.slice(LOGIN_PATH.length + 1).split("/");
  let details: Interaction;
  try {
    details = await c.provider.interactionDetails(req as never, res as never);
  } catch {
    return sendPage(res, 400, await fallbackFrame(c, req.headers["accept-language"]), (t) => [t.errorTitle, errorBody(t.loginExpired)]);
  }
  if (!uid || details.uid !== uid || rest.length > 0) {
    return sendPage(res, 404, await fallbackFrame(c, req.headers["accept-language"]), (t) => [t.errorTitle, errorBody(t.loginExpired)]);
  }
  const scopes = splitScope(details.params.scope as string | undefined);
  const orgId = requestedOrg(scopes);
  const loginOrg = orgId ?? (await defaultOrgOf(c.db, c.instanceId));
  const [lang, look] = await Promise.all([
    loginLanguage(c.db, { instanceId: c.instanceId, orgId: loginOrg }, details.params.ui_locales as string | undefined, req.headers["accept-language"]),
    lookOf(c, { orgId: loginOrg, clientId: details.params.client_id }),
  ]);
  const t = TEXTS[lang];
  const csrf = createHmac("sha256", c.csrfKey).update(uid).digest("base64url");
  const base = `${LOGIN_PATH}/${uid}`;
  const show = (status: number, title: string, body: string) => sendPage(res, status, { lang, look }, () => [title, body]);
  const askLoginName = async (status: number, loginName: string, error?: FormError) =>
    show(
      status,
      t.signInTitle,
      loginNameForm(t, { action: `${base}/loginname`, csrf, loginName, ...(error && { error }) }) +
        otherWaysIn(
          t,
          await passkeySignInForm({ c, details, base, csrf, t }, loginOrg),
          await externalLoginButtons(c.db, c.instanceId, details.params, t, csrf, uid),
        ) +
        (await registerLink(c, orgId, base, t)),
    );

  const steps: PromptStep = {
    req,
    res,
    c,
    details,
    step,
    base,
    csrf,
    lang,
    t,
    look,
    requestedOrg: orgId,
    show,
    askLoginName,
    proceed: (progress) => continueSignIn(steps, progress),
  };
  if (await promptSteps(steps)) return;

  if (req.method === "GET" && step === undefined) {
    if (details.prompt.name === "consent") return consent(req, res, c.provider, details);
    if (await resumeSignIn(steps)) return;
    return askLoginName(200, String(details.params.login_hint ?? ""));
  }
  if (req.method !== "POST" || (step !== "loginname" && step !== "password")) {
    return show(405, t.errorTitle, errorBody(t.loginExpired));
  }
  let form: Record<string, string>;
  try {
    form = await readForm(req, c.maxBodyBytes);
  } catch (error) {
    if (error instanceof OAuthError) return show(error.status, t.errorTitle, errorBody(t.formExpired));
    throw error;
  }
  if (!sameToken(form.csrf, csrf)) return show(403, t.errorTitle, errorBody(t.formExpired));
  const loginName = (form.loginName ?? "").slice(0, 400);
  const user = loginName ? await userByLoginName(c.db, c.instanceId, loginName, orgId) : undefined;
  // The first page names an account; the second checks its password (and names it again).
  const method = step === "loginname" ? "login_name" : "password";
  const refused = user ? stateRefusal(user.state) : "unknown_name";
  if (refused) recordSignIn(steps, { method, outcome: refused, ...(user && { user }) });
  if (!user || user.state === "inactive") return askLoginName(401, loginName, fieldError("loginName", t.unknownUser));
  if (user.state === "locked") return askLoginName(403, loginName, t.userLocked);
  const settings = await settingsOf(c, user.orgId);
  if (!settings.allowUsernamePassword) {
    recordSignIn(steps, { method, outcome: "not_allowed", user });
    return show(403, t.errorTitle, errorBody(t.passwordLoginDisabled));
  }
  const shownName = shownLoginName(look, loginName, user.row.username);
  const askPassword = (status: number, error?: FormError) =>
    show(
      status,
      t.signInTitle,
      passwordForm(t, {
        action: `${base}/password`,
        csrf,
        loginName,
        shownName,
        otherAccount: base,
        forgotPassword: forgotPasswordLink(base, loginName),
        ...(error && { error }),
      }),
    );
  if (step === "loginname") return askPassword(200);

  const address = req.socket?.remoteAddress ?? "";
  const wait = refusedTry(c.guards, `${c.instanceId} ${address}`, `${c.instanceId} ${user.id}`);
  if (wait !== undefined) {
    res.setHeader("retry-after", String(wait));
    return askPassword(429, t.tooManyAttempts);
  }
  const checked = await checkSignInPassword(c, c.hasher, c.instanceId, user, form.password, async () => settings.maxPasswordAttempts);
  recordSignIn(steps, { method: "password", outcome: checked.ok ? "succeeded" : "wrong_password", user });
  if (!checked.ok) return checked.locked ? askLoginName(403, loginName, t.userLocked) : askPassword(401, fieldError("password", t.wrongPassword));
  await continueSignIn(steps, { userId: user.id, amr: ["pwd"] });
}

/** The service's applications are its own: what they ask for is granted without a question. */
async function consent(req: NodeRequest, res: NodeResponse, provider: Provider, details: Interaction): Promise<void> {
  const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
  const grant =
    (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
    new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(" "));
  const grantId = await grant.save();
  await provider.interactionFinished(req as never, res as never, { consent: { grantId } }, { mergeWithLastSubmission: true });
}
