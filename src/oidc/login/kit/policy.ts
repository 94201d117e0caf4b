import { interactionPolicy, type KoaContextWithOIDC } from "oidc-provider";
import { OIDC_ROUTES } from "../../provider/routes.js";
import { ACR_MFA, asksForMfa } from "../../helpers/acr.js";
import type { SettingsKind } from "../../../domain/settings/kind.js";
import { outlivedByPassword, passwordChangedAt } from "../../../domain/user/passwords.js";
import type { Db } from "../../../store/db.js";
import { ssoStanding, type Standing } from "./sso-standing.js";
import type { KnownAccounts } from "./known-accounts.js";

const { base, Check, Prompt } = interactionPolicy;

/**
 * The provider's interaction policy with the two prompts of the spec it lacks. Without them
 * node-oidc-provider 9 answers `prompt=select_account` and `prompt=create` with
 * invalid_request ("unsupported prompt value requested": only the policy's prompt names
 * are supported). Both come before `login`, so that their pages open the interaction:
 * - `create`: requested only (prompt=create), the registration page (register.ts);
 * - `select_account`: requested (prompt=select_account), or without any prompt when more
 *   than one account is signed in on this browser (the spec: "with no prompt the user
 *   chooses when several sessions exist"). A finished login resolves it (prompts.ts puts
 *   `select_account` into every login result), so the resume does not ask again, and
 *   `prompt=none` never reaches the check (it names a prompt).
 */
export function loginPolicy(known: KnownAccounts, c: { db: () => Db; instanceId: string; loginSettings: SettingsKind }): interactionPolicy.DefaultPolicy {
  const policy = base();
  const severalAccounts = new Check("several_accounts", "several accounts are signed in on this user agent", async (ctx: KoaContextWithOIDC) => {
    if (ctx.oidc.params?.prompt !== undefined || (ctx.oidc.result as Record<string, unknown> | undefined)?.select_account) return Check.NO_NEED_TO_PROMPT;
    return (await known.list(ctx.get("cookie"))).length > 1 ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
  });
  policy.add(new Prompt({ name: "select_account", requestable: true }, severalAccounts), 0);
  policy.add(new Prompt({ name: "create", requestable: true }), 0);
  const login = policy.get("login")!.checks;
  login.add(mfaStepUp);
  login.add(passwordChanged(c));
  const standing = standingOf(known, c);
  login.add(
    new Check("first_factor_outlived", "the sign-in is older than its lifetime", "login_required", async (ctx: KoaContextWithOIDC) =>
      (await standing(ctx))?.first ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT,
    ),
  );
  login.add(
    new Check(SECOND_FACTOR_OUTLIVED, "the second factor is older than its lifetime", "interaction_required", async (ctx: KoaContextWithOIDC) =>
      (await standing(ctx))?.second ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT,
    ),
  );
  return policy;
}

/** The reason the pages open on the second factor's step for the browser's account (pages.ts). */
export const SECOND_FACTOR_OUTLIVED = "second_factor_outlived";

/** A sign-in the request is about to reuse: the browser's session, unless the request just signed in. */
function reused(ctx: KoaContextWithOIDC) {
  const session = ctx.oidc.session;
  return session?.accountId && !(ctx.oidc.result as Record<string, unknown> | undefined)?.login ? session : undefined;
}

/**
 * Single sign-on within the check lifetimes of the login settings (sso-standing.ts), worked
 * out once per request for both of its checks: a first factor older than its lifetime signs
 * in again (`prompt=none`: login_required), a second factor older than its own is asked again
 * on the pages (`prompt=none`: interaction_required).
 */
function standingOf(known: KnownAccounts, c: { db: () => Db; instanceId: string; loginSettings: SettingsKind }) {
  const worked = new WeakMap<object, Promise<Standing | undefined>>();
  return (ctx: KoaContextWithOIDC): Promise<Standing | undefined> => {
    const session = reused(ctx);
    if (!session) return Promise.resolve(undefined);
    let standing = worked.get(ctx);
    if (!standing) {
      const signIn = { amr: session.amr ?? [], authTime: session.authTime() ?? 0 };
      standing = known.find(ctx.get("cookie"), session.accountId!).then((entry) => ssoStanding({ ...c, db: c.db() }, session.accountId!, signIn, entry));
      worked.set(ctx, standing);
    }
    return standing;
  };
}

/**
 * A browser whose sign-in the password proved signs in again once the password changed
 * after it (an administrator's new password, a reset): single sign-on never outlives the
 * password that gave it (domain/user/passwords.ts). With `prompt=none`, `login_required`.
 */
function passwordChanged(c: { db: () => Db; instanceId: string }) {
  return new Check("password_changed", "the password changed since the sign-in", "login_required", async (ctx: KoaContextWithOIDC) => {
    const session = reused(ctx);
    if (!session?.amr?.includes("pwd")) return Check.NO_NEED_TO_PROMPT;
    const changedAt = await passwordChangedAt(c.db(), c.instanceId, session.accountId!);
    return outlivedByPassword(session.amr, session.authTime(), changedAt) ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
  });
}

/**
 * A request that accepts only multi-factor (`acr_values`, acr.ts) while the browser's sign-in
 * was single-factor signs in again, where the second factor is asked (sign-in.ts). The
 * provider itself enforces only an essential `acr` of the claims parameter, which is not
 * offered. Not again right after the sign-in: a person without a usable second factor gets
 * the single-factor `acr` rather than a loop (the claim is voluntary; the client decides).
 */
const mfaStepUp = new Check("acr_values", "the request accepts only multi-factor sign-ins", "login_required", (ctx: KoaContextWithOIDC) => {
  if (!asksForMfa(ctx.oidc.params ?? {}) || (ctx.oidc.result as Record<string, unknown> | undefined)?.login) return Check.NO_NEED_TO_PROMPT;
  return ctx.oidc.session?.accountId && ctx.oidc.session.acr !== ACR_MFA ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
});

/**
 * After the end-session confirmation: the account the browser signed out of is no longer
 * offered for selection. The provider also passes here when a login switches the browser
 * to another account (it ends the old session and returns to the authorization's resume);
 * that account was not signed out by its person and stays known.
 */
export async function forgetSignedOut(ctx: KoaContextWithOIDC, known: KnownAccounts): Promise<void> {
  if (ctx.oidc?.route !== "end_session_confirm" || ctx.status !== 303 || !ctx.oidc.params?.logout) return;
  const accountId = ctx.oidc.session?.accountId;
  const location = new URL(ctx.response.get("location") || "/", "http://host");
  if (!accountId || location.pathname.startsWith(`${OIDC_ROUTES.authorization}/`)) return;
  await known.forget(ctx.get("cookie"), accountId);
}
