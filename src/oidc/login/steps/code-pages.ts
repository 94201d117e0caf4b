import { findUserRow } from "../../../domain/user/queries.js";
import { defaultOrgOf } from "../../../domain/user/login-names.js";
import type { NodeRequest, NodeResponse } from "../../../http/respond.js";
import { ACCEPT_INVITE_PATH, onwardPath, RESET_PASSWORD_PATH, VERIFY_EMAIL_PATH } from "../kit/code-links.js";
import type { CodePage } from "../kit/code-page-form.js";
import type { LoginContext } from "../kit/context.js";
import { loginLanguage } from "../view/language.js";
import { lookOf } from "../view/look.js";
import { sendPage } from "../view/send-page.js";
import { setPasswordPage } from "./set-password-page.js";
import { TEXTS } from "../view/texts/index.js";
import { verifyEmailPage } from "./verify-email.js";

const PAGES: Record<string, (p: CodePage) => Promise<void>> = {
  [VERIFY_EMAIL_PATH]: verifyEmailPage,
  [RESET_PASSWORD_PATH]: setPasswordPage,
  [ACCEPT_INVITE_PATH]: setPasswordPage,
};

/**
 * The pages messages link to (code-links.ts): no interaction or session; the code is the
 * proof. They speak the user's preferred language, else its organization's (the default
 * organization's for an unknown user). False when the path is none of them.
 */
export async function codePages(req: NodeRequest, res: NodeResponse, c: LoginContext): Promise<boolean> {
  const url = new URL(req.url ?? "/", "http://x");
  const page = PAGES[url.pathname];
  if (!page) return false;
  const returnTo = onwardPath(url.searchParams.get("returnTo"));
  const asked = {
    user: (url.searchParams.get("user") ?? "").slice(0, 200),
    code: (url.searchParams.get("code") ?? "").slice(0, 64),
    ...(returnTo && { returnTo }),
  };
  const user = asked.user ? await findUserRow(c.db, c.instanceId, asked.user) : undefined;
  const orgId = user?.org_id ?? (await defaultOrgOf(c.db, c.instanceId));
  // The person's own language first, as in the message that brought them here.
  const [lang, look] = await Promise.all([
    loginLanguage(c.db, { instanceId: c.instanceId, orgId }, user?.preferred_language ?? undefined, req.headers["accept-language"]),
    lookOf(c, { orgId }),
  ]);
  await page({
    req,
    res,
    c,
    path: url.pathname,
    lang,
    t: TEXTS[lang],
    asked,
    show: (status, title, body) => sendPage(res, status, { lang, look }, () => [title, body]),
  });
  return true;
}
