import { hasSecondFactor } from "../../../domain/user-factor/check-lifetimes.js";
import { acrOf } from "../../helpers/acr.js";
import { appendSetCookie } from "../../../http/cookies.js";
import type { NodeRequest, NodeResponse } from "../../../http/respond.js";
import type { LoginContext } from "../kit/context.js";
import { KnownAccounts, knownAccountsKey } from "../kit/known-accounts.js";

/** The accounts signed in on this browser (known-accounts.ts), for this instance's login pages. */
export function knownAccountsOf(c: LoginContext): KnownAccounts {
  return new KnownAccounts(() => c.db, c.instanceId, knownAccountsKey(c.csrfKey), c.guards.sessionTtlS);
}

/**
 * Ends an interaction signed in as an account: remembers the account on this browser (for
 * selection and single sign-on later, with when its checks were made) and hands the login to
 * the provider. `authTime` is the time of the sign-in's oldest check, its first factor (the
 * ID token's `auth_time`: a second factor asked again does not make an old password new);
 * `secondAt` when its second factor was checked; both now when not given. `amr` is how the
 * person signed in (the ID token's `amr`, and its `acr` from it: acr.ts). The result also
 * resolves the `select_account` and `create` prompts (policy.ts), which the provider asks
 * again on resume for every requested prompt the result does not name. For every way of
 * signing in (password, registration, selection, external identity providers).
 */
export async function finishLogin(
  req: NodeRequest,
  res: NodeResponse,
  c: LoginContext,
  accountId: string,
  { authTime, amr = ["pwd"], secondAt }: { authTime?: number; amr?: string[]; secondAt?: number } = {},
): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const ts = authTime ?? now;
  const entry = { accountId, authTime: ts, amr, ...(hasSecondFactor(amr) && { secondAt: secondAt ?? now }) };
  const cookie = await knownAccountsOf(c).remember(req.headers.cookie, entry, c.provider.issuer.startsWith("https:"));
  if (cookie) appendSetCookie(res, cookie);
  await c.provider.interactionFinished(
    req as never,
    res as never,
    { login: { accountId, amr, acr: acrOf(amr), remember: true, ts }, select_account: {}, create: {} },
    { mergeWithLastSubmission: false },
  );
}
