import { findUserRow } from "../../../domain/user/queries.js";
import { outlivedByPassword, passwordChangedAt } from "../../../domain/user/passwords.js";
import { activeAccount, type Account } from "../../../domain/user/accounts.js";
import { buttonForm, errorBody, escapeHtml, forgotPasswordLink, hiddenField, links, passwordForm, shownLoginName } from "../view/render.js";
import type { PromptStep } from "../kit/context.js";
import { finishLogin, knownAccountsOf } from "./finish.js";
import { settingsOf, signInSettingsOf } from "../kit/org-settings.js";
import { secondFactorDue, vouchedForElsewhere } from "../../../domain/user-factor/due.js";
import { firstFactors, hasSecondFactor } from "../../../domain/user-factor/check-lifetimes.js";
import type { KnownAccount } from "../kit/known-accounts.js";
import { SECOND_FACTOR_OUTLIVED } from "../kit/policy.js";
import { ssoStanding } from "../kit/sso-standing.js";

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
  return found.filter(
    (f): f is Choice => f.account !== undefined && f.account.row.type !== "machine" && (s.requestedOrg === undefined || f.account.orgId === s.requestedOrg),
  );
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
    .map(({ account }) =>
      buttonForm(
        `${base}/select`,
        hiddenField("csrf", csrf) + hiddenField("accountId", account.userId),
        shownLoginName(s.look, account.loginName, account.username),
      ),
    )
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
  const { entry } = chosen;
  const amr = entry.amr ?? ["pwd"];
  // A sign-in the password proved counts for nothing once the password changed after it.
  const changed = amr.includes("pwd") && outlivedByPassword(amr, entry.authTime, await passwordChangedAt(s.c.db, s.c.instanceId, chosen.account.userId));
  const standing = await ssoStanding(
    { db: s.c.db, instanceId: s.c.instanceId, loginSettings: s.c.guards.loginSettings },
    chosen.account.userId,
    { amr, authTime: entry.authTime },
    entry,
    now,
  );
  const fresh = !prompts.includes("login") && !changed && standing !== undefined && !standing.first && (maxAge === undefined || now - entry.authTime <= maxAge);
  if (fresh) {
    // The second factor is asked again once its check is older than the settings allow (or a request's acr_values ask for one).
    const user = await findUserRow(s.c.db, s.c.instanceId, chosen.account.userId);
    if (!user) return s.askLoginName(200, "");
    const due = await secondFactorDue(s.c.db, user, await signInSettingsOf(s, chosen.account.orgId), vouchedForElsewhere(amr));
    if (standing.second || ((due.ask || due.setUp) && !hasSecondFactor(amr))) return secondFactorAgain(s, chosen.account.userId, entry);
    return finishLogin(s.req, s.res, s.c, chosen.account.userId, {
      authTime: entry.authTime,
      amr,
      ...(entry.secondAt !== undefined && { secondAt: entry.secondAt }),
    });
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

/**
 * An earlier sign-in of this browser whose first factor still counts, on to its second
 * factor's step again: the sign-in keeps its first factor's time (the ID token's
 * `auth_time`). A passkey's sign-in (two in one) is asked for again as a whole.
 */
function secondFactorAgain(s: PromptStep, accountId: string, entry: KnownAccount): Promise<void> {
  const first = firstFactors(entry.amr ?? ["pwd"]);
  return first.length > 0 ? s.proceed({ userId: accountId, amr: first, first: entry.authTime }) : s.askLoginName(200, "");
}

/**
 * The first page of an interaction the provider opened only because the browser's second
 * factor outlived its lifetime (policy.ts): the factor's step for the browser's account,
 * whose first factor still counts. False when that is not the case (the login name page).
 */
export async function resumeSignIn(s: PromptStep): Promise<boolean> {
  const { details } = s;
  const accountId = details.session?.accountId;
  const reasons = (details.prompt.reasons ?? []) as string[];
  if (!accountId || details.prompt.name !== "login" || reasons.length !== 1 || reasons[0] !== SECOND_FACTOR_OUTLIVED) return false;
  const entry = await knownAccountsOf(s.c).find(s.req.headers.cookie, accountId);
  if (!entry) return false;
  await secondFactorAgain(s, accountId, entry);
  return true;
}
