import { findUserRow } from "../../domain/user/queries.js";
import { outlivedByPassword, passwordChangedAt } from "../../domain/user/passwords.js";
import { activeAccount, type Account } from "../accounts.js";
import { buttonForm, errorBody, escapeHtml, forgotPasswordLink, hiddenField, links, passwordForm, shownLoginName } from "./render.js";
import type { PromptStep } from "./context.js";
import { finishLogin, knownAccountsOf } from "./finish.js";
import { settingsOf, signInSettingsOf } from "./org-settings.js";
import { secondFactorChecked, secondFactorDue, vouchedForElsewhere } from "../../domain/user-factor/due.js";
import type { KnownAccount } from "./known-accounts.js";

interface Choice {
  entry: KnownAccount;
  account: Account;
}

/**
 * The accounts this browser may choose from: its live entries whose user and organization
 * are still active and, when the scope restricts the login, of that organization.
 */
async function choices(s: PromptStep): Promise<Choice[]> {
  const entries = await knownAccountsOf(s.c).list(s.req.headers.cookie);
  const found = await Promise.all(entries.map(async (entry) => ({ entry, account: await activeAccount(s.c.db, s.c.instanceId, entry.accountId) })));
  return found.filter((f): f is Choice => f.account !== undefined && f.account.row.type === "human" && (s.requestedOrg === undefined || f.account.orgId === s.requestedOrg));
}

/** What the password form names the account by: its login name when its organization has a domain. */
function signInName(account: Account): string {
  return account.primaryDomain ? account.loginName : account.username;
}

/** One button per known account (its login name, as the branding shows them), then "use another account". */
export async function accountChooser(s: PromptStep): Promise<void> {
  const { t, base, csrf } = s;
  const list = await choices(s);
  const buttons = list
    .map(({ account }) => buttonForm(`${base}/select`, hiddenField("csrf", csrf) + hiddenField("accountId", account.userId), shownLoginName(s.look, account.loginName, account.username)))
    .join("");
  const empty = list.length === 0 ? `<p class="muted">${escapeHtml(t.selectAccountEmpty)}</p>` : "";
  s.show(200, t.selectAccountTitle, `${empty}${buttons}${links([[`${base}/other`, t.otherAccount]])}`);
}

/**
 * A known account chosen: finished with its original sign-in when that still counts for
 * this request (its second factor too, within `second_factor_check_lifetime`: else that is
 * asked again); the password step for it when the request wants a fresh one (prompt=login,
 * or max_age older than the sign-in) or the password changed since the sign-in; the login name page when the browser does not know
 * it (any more).
 */
export async function chooseAccount(s: PromptStep, form: Record<string, string>): Promise<void> {
  const chosen = (await choices(s)).find((c) => c.account.userId === form.accountId);
  if (!chosen) return s.askLoginName(200, "");
  const prompts = String(s.details.params.prompt ?? "").split(" ");
  const maxAge = s.details.params.max_age === undefined ? undefined : Number(s.details.params.max_age);
  const now = Math.floor(Date.now() / 1000);
  const amr = chosen.entry.amr ?? ["pwd"];
  // A sign-in the password proved counts for nothing once the password changed after it.
  const outlived = amr.includes("pwd") && outlivedByPassword(amr, chosen.entry.authTime, await passwordChangedAt(s.c.db, s.c.instanceId, chosen.account.userId));
  const fresh = !prompts.includes("login") && !outlived && (maxAge === undefined || now - chosen.entry.authTime <= maxAge);
  if (fresh) {
    const settings = await signInSettingsOf(s, chosen.account.orgId);
    const user = await findUserRow(s.c.db, s.c.instanceId, chosen.account.userId);
    if (!user) return s.askLoginName(200, "");
    const due = await secondFactorDue(s.c.db, user, settings, vouchedForElsewhere(amr));
    const checked = secondFactorChecked(amr) && now - chosen.entry.authTime <= settings.secondFactorCheckLifetimeMs / 1000;
    // The second factor is asked again (and the sign-in counts from then) once its check is older than the settings allow.
    if ((due.ask || due.setUp) && !checked) {
      // The first factor still counts; a passkey's sign-in (two in one) is asked for again as a whole.
      const first = amr.filter((a) => a === "pwd" || a === "fed");
      return first.length > 0 ? s.proceed({ userId: chosen.account.userId, amr: first }) : s.askLoginName(200, "");
    }
    return finishLogin(s.req, s.res, s.c, chosen.account.userId, { authTime: chosen.entry.authTime, amr });
  }
  if (!(await settingsOf(s.c, chosen.account.orgId)).allowUsernamePassword) return s.show(403, s.t.errorTitle, errorBody(s.t.passwordLoginDisabled));
  const loginName = signInName(chosen.account);
  s.show(
    200,
    s.t.signInTitle,
    passwordForm(s.t, {
      action: `${s.base}/password`,
      csrf: s.csrf,
      loginName,
      shownName: shownLoginName(s.look, loginName, chosen.account.username),
      otherAccount: `${s.base}/other`,
      forgotPassword: forgotPasswordLink(s.base, loginName),
    }),
  );
}
