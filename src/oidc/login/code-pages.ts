import type { ServerResponse } from "node:http";
import type { NodeRequest, NodeResponse } from "../../http/respond.js";
import { OAuthError, readForm } from "../endpoints/oauth-response.js";
import { ACCEPT_INVITE_PATH, RESET_PASSWORD_PATH, VERIFY_EMAIL_PATH } from "./code-links.js";
import type { LoginContext } from "./context.js";
import { loginLanguage } from "./language.js";
import { lookOf } from "./look.js";
import { takeAddressTry } from "./rate-limit.js";
import { errorBody } from "./render.js";
import { sendPage } from "./send-page.js";
import { setPasswordPage } from "./set-password-page.js";
import { TEXTS, type Texts } from "./texts/index.js";
import { verifyEmailPage } from "./verify-email.js";

/** One request to a page a message links to, with what every such page works out first. */
export interface CodePage {
  req: NodeRequest;
  res: NodeResponse;
  c: LoginContext;
  path: string;
  t: Texts;
  /** The user and code of the link's query (GET), bounded. */
  asked: { user: string; code: string };
  show(status: number, title: string, body: string): void;
}

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
  const asked = { user: (url.searchParams.get("user") ?? "").slice(0, 200), code: (url.searchParams.get("code") ?? "").slice(0, 64) };
  const user = asked.user ? await c.db.selectFrom("users").select(["org_id", "preferred_language"]).where("instance_id", "=", c.instanceId).where("id", "=", asked.user).executeTakeFirst() : undefined;
  const orgId = user?.org_id ?? (await c.db.selectFrom("instances").select("default_org_id").where("id", "=", c.instanceId).executeTakeFirstOrThrow()).default_org_id;
  // The person's own language first, as in the message that brought them here.
  const [lang, look] = await Promise.all([loginLanguage(c.db, { instanceId: c.instanceId, orgId }, user?.preferred_language ?? undefined, req.headers["accept-language"]), lookOf(c, { orgId })]);
  await page({ req, res, c, path: url.pathname, t: TEXTS[lang], asked, show: (status, title, body) => sendPage(res, status, { lang, look }, () => [title, body]) });
  return true;
}

/** Where a code page's form posts: the page again, with the user in the query, so that the answer speaks the user's language too. */
export const codePageAction = (path: string, userId: string) => `${path}?${new URLSearchParams({ user: userId.slice(0, 200) })}`;

/**
 * The posted form of a code page, once the address's budget allows another try (codes are
 * guessed by trying); undefined when an answer (an error page) was sent instead.
 */
export async function postedCodeForm(p: CodePage, title: string, again: (form: Record<string, string>) => string): Promise<{ form: Record<string, string>; userId: string; code: string } | undefined> {
  const { req, res, c, t } = p;
  if (req.method !== "POST") {
    p.show(405, title, errorBody(t.formExpired));
    return undefined;
  }
  let form: Record<string, string>;
  try {
    form = await readForm(req, c.maxBodyBytes);
  } catch (error) {
    if (error instanceof OAuthError) {
      p.show(error.status, title, errorBody(t.formExpired));
      return undefined;
    }
    throw error;
  }
  if (!takeAddressTry(c.guards.perIp, req, res as ServerResponse, c.instanceId, "code")) {
    p.show(429, title, errorBody(t.tooManyAttempts) + again(form));
    return undefined;
  }
  const userId = (form.user ?? "").slice(0, 200);
  const known = userId !== "" && (await c.db.selectFrom("users").select("id").where("instance_id", "=", c.instanceId).where("id", "=", userId).executeTakeFirst()) !== undefined;
  return { form, userId: known ? userId : "", code: (form.code ?? "").slice(0, 64) };
}
