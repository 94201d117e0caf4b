import { acrOf } from "../acr.js";
import { appendSetCookie } from "../../http/cookies.js";
import type { NodeRequest, NodeResponse } from "../../http/respond.js";
import type { LoginContext } from "./context.js";
import { KnownAccounts, knownAccountsKey } from "./known-accounts.js";

/** The accounts signed in on this browser (known-accounts.ts), for this instance's login pages. */
export function knownAccountsOf(c: LoginContext): KnownAccounts {
  return new KnownAccounts(() => c.db, c.instanceId, knownAccountsKey(c.csrfKey), c.guards.sessionTtlS);
}

/**
 * Ends an interaction signed in as an account: remembers the account on this browser (for
 * selection later) and hands the login to the provider. `authTime` and `amr` are those of
 * the original sign-in of a known account chosen without a password; otherwise now, and
 * how the person just signed in (the ID token's `amr`, and its `acr` from it: acr.ts). The result also resolves
 * the `select_account` and `create` prompts (policy.ts), which the provider asks again
 * on resume for every requested prompt the result does not name. For every way of
 * signing in (password, registration, selection, external identity providers).
 */
export async function finishLogin(req: NodeRequest, res: NodeResponse, c: LoginContext, accountId: string, { authTime, amr = ["pwd"] }: { authTime?: number; amr?: string[] } = {}): Promise<void> {
  const ts = authTime ?? Math.floor(Date.now() / 1000);
  const cookie = await knownAccountsOf(c).remember(req.headers.cookie, { accountId, authTime: ts, amr }, c.provider.issuer.startsWith("https:"));
  if (cookie) appendSetCookie(res, cookie);
  await c.provider.interactionFinished(req as never, res as never, { login: { accountId, amr, acr: acrOf(amr), remember: true, ts }, select_account: {}, create: {} }, { mergeWithLastSubmission: false });
}
