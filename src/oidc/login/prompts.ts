import type Provider from "oidc-provider";
import { loginSettingsOf, type LoginSettings } from "../../domain/settings/login.js";
import { appendSetCookie } from "../../http/cookies.js";
import type { NodeRequest, NodeResponse } from "../../http/respond.js";
import { OAuthError, readForm } from "../endpoints/oauth-response.js";
import { sameToken } from "./form-token.js";
import { KnownAccounts, knownAccountsKey } from "./known-accounts.js";
import type { LoginContext } from "./pages.js";
import { errorBody, escapeHtml } from "./render.js";
import { registerPage, registerSubmit } from "./register.js";
import { accountChooser, chooseAccount } from "./select-account.js";
import type { Language, Texts } from "./texts/index.js";
import { defaultOrgOf } from "./users.js";

export type Interaction = Awaited<ReturnType<Provider["interactionDetails"]>>;

/** One request to the steps of this module, with what pages.ts already worked out. */
export interface PromptStep {
  req: NodeRequest;
  res: NodeResponse;
  c: LoginContext;
  details: Interaction;
  step: string | undefined;
  /** `${LOGIN_PATH}/<uid>`: where the interaction's pages live. */
  base: string;
  csrf: string;
  lang: Language;
  t: Texts;
  /** The organization the scope restricts the login to, if any. */
  requestedOrg: string | undefined;
  show(status: number, title: string, body: string): void;
  askLoginName(status: number, loginName: string, error?: string): Promise<void>;
}

/**
 * The steps of account selection and registration, before pages.ts's own: the first page
 * of a `select_account` or `create` interaction, "use another account" (`/other`), the
 * registration form (`/register`) and the choice of a known account (`/select`). False
 * when the request is pages.ts's to answer.
 */
export async function promptSteps(s: PromptStep): Promise<boolean> {
  const { req, step, details } = s;
  if (req.method === "GET") {
    if (step === undefined && details.prompt.name === "select_account") return accountChooser(s).then(() => true);
    if ((step === undefined && details.prompt.name === "create") || step === "register") return registerPage(s).then(() => true);
    if (step === "other") return s.askLoginName(200, String(details.params.login_hint ?? "")).then(() => true);
    return false;
  }
  if (req.method !== "POST" || (step !== "select" && step !== "register")) return false;
  const form = await readCheckedForm(s);
  if (!form) return true;
  if (step === "select") await chooseAccount(s, form);
  else await registerSubmit(s, form);
  return true;
}

/** The posted form when its token is this interaction's; otherwise the error page is sent. */
async function readCheckedForm(s: PromptStep): Promise<Record<string, string> | undefined> {
  let form: Record<string, string>;
  try {
    form = await readForm(s.req, s.c.maxBodyBytes);
  } catch (error) {
    if (error instanceof OAuthError) {
      s.show(error.status, s.t.errorTitle, errorBody(s.t.formExpired));
      return undefined;
    }
    throw error;
  }
  if (!sameToken(form.csrf, s.csrf)) {
    s.show(403, s.t.errorTitle, errorBody(s.t.formExpired));
    return undefined;
  }
  return form;
}

/** The accounts signed in on this browser (known-accounts.ts), for this instance's login pages. */
export function knownAccountsOf(c: LoginContext): KnownAccounts {
  return new KnownAccounts(() => c.db, c.instanceId, knownAccountsKey(c.csrfKey), c.guards.sessionTtlS);
}

/** The organization a login is in: the scope's, else the instance's default organization. */
export async function loginOrgOf(c: LoginContext, requestedOrg: string | undefined): Promise<string> {
  return requestedOrg ?? (await defaultOrgOf(c.db, c.instanceId));
}

/** The login settings of an organization with this process's configured lockout default. */
export function settingsOf(c: LoginContext, orgId: string): Promise<LoginSettings> {
  return loginSettingsOf(c.db, c.instanceId, orgId, c.guards.loginSettings);
}

/** The "Register" link under the login name form, when the login's organization allows it. */
export async function registerLink(c: LoginContext, requestedOrg: string | undefined, base: string, t: Texts): Promise<string> {
  const settings = await settingsOf(c, await loginOrgOf(c, requestedOrg));
  return settings.allowRegister ? `<p><a href="${escapeHtml(`${base}/register`)}">${escapeHtml(t.registerLink)}</a></p>` : "";
}

/**
 * Ends an interaction signed in as an account: remembers the account on this browser (for
 * selection later) and hands the login to the provider. `authTime` and `amr` are those of
 * the original sign-in of a known account chosen without a password; otherwise now, and
 * how the person just signed in (the ID token's `amr`). The result also resolves
 * the `select_account` and `create` prompts (policy.ts), which the provider asks again
 * on resume for every requested prompt the result does not name. For every way of
 * signing in (password, registration, selection, external identity providers).
 */
export async function finishLogin(req: NodeRequest, res: NodeResponse, c: LoginContext, accountId: string, { authTime, amr = ["pwd"] }: { authTime?: number; amr?: string[] } = {}): Promise<void> {
  const ts = authTime ?? Math.floor(Date.now() / 1000);
  const cookie = await knownAccountsOf(c).remember(req.headers.cookie, { accountId, authTime: ts, amr }, c.provider.issuer.startsWith("https:"));
  if (cookie) appendSetCookie(res, cookie);
  await c.provider.interactionFinished(req as never, res as never, { login: { accountId, amr, remember: true, ts }, select_account: {}, create: {} }, { mergeWithLastSubmission: false });
}
