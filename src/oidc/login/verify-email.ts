import type { ServerResponse } from "node:http";
import type { SecretBox } from "../../crypto/encryption.js";
import { verifyContact } from "../../domain/user/verification.js";
import type { NodeRequest, NodeResponse } from "../../http/respond.js";
import { OAuthError, readForm } from "../endpoints/oauth-response.js";
import type { LoginContext } from "./context.js";
import { loginLanguage } from "./language.js";
import { LOGIN_PATH } from "./paths.js";
import { errorBody, escapeHtml } from "./render.js";
import { sendPage } from "./send-page.js";
import { TEXTS, type Texts } from "./texts/index.js";

/**
 * Where the link of a `verify_email` message lands: a form with the code filled in, which
 * the person submits (a GET never verifies: mail scanners open links). No interaction
 * or session is needed; the code is the proof. Attempts count per address like passwords,
 * and every refusal reads the same ("the code is not valid").
 */
export const VERIFY_EMAIL_PATH = `${LOGIN_PATH}/email/verify`;

/** The link's path for a user and code (domain/user/verification.ts puts the instance's address before it). */
export const verifyEmailPath = (userId: string, code: string) => `${VERIFY_EMAIL_PATH}?${new URLSearchParams({ user: userId, code })}`;

export async function verifyEmailPage(req: NodeRequest, res: NodeResponse, c: LoginContext & { box: SecretBox }): Promise<boolean> {
  const url = new URL(req.url ?? "/", "http://x");
  if (url.pathname !== VERIFY_EMAIL_PATH) return false;
  await answer(req, res, c, url.searchParams);
  return true;
}

async function answer(req: NodeRequest, res: NodeResponse, c: LoginContext & { box: SecretBox }, query: URLSearchParams): Promise<void> {
  const asked = { user: (query.get("user") ?? "").slice(0, 200), code: (query.get("code") ?? "").slice(0, 64) };
  const user = asked.user ? await c.db.selectFrom("users").select("org_id").where("instance_id", "=", c.instanceId).where("id", "=", asked.user).executeTakeFirst() : undefined;
  const orgId = user?.org_id ?? (await c.db.selectFrom("instances").select("default_org_id").where("id", "=", c.instanceId).executeTakeFirstOrThrow()).default_org_id;
  const lang = await loginLanguage(c.db, { instanceId: c.instanceId, orgId }, undefined, req.headers["accept-language"]);
  const t = TEXTS[lang];
  const show = (status: number, body: string) => sendPage(res, status, lang, () => [t.verifyEmailTitle, body]);
  if (req.method === "GET") return show(200, verifyForm(t, asked.user, asked.code));
  if (req.method !== "POST") return show(405, errorBody(t.formExpired));
  let form: Record<string, string>;
  try {
    form = await readForm(req, c.maxBodyBytes);
  } catch (error) {
    if (error instanceof OAuthError) return show(error.status, errorBody(t.formExpired));
    throw error;
  }
  const userId = (form.user ?? "").slice(0, 200);
  const code = (form.code ?? "").slice(0, 64);
  if (!c.guards.perIp.take(`${c.instanceId} verify ${req.socket?.remoteAddress ?? ""}`)) {
    (res as ServerResponse).setHeader("retry-after", String(c.guards.perIp.retryAfterS()));
    return show(429, errorBody(t.tooManyAttempts) + verifyForm(t, userId, code));
  }
  const exists = userId !== "" && (await c.db.selectFrom("users").select("id").where("instance_id", "=", c.instanceId).where("id", "=", userId).executeTakeFirst()) !== undefined;
  const verified = exists && code ? await c.transact((tx) => verifyContact(tx, { instanceId: c.instanceId, userId }, c, userId, "email", code)) : undefined;
  if (!verified) return show(400, errorBody(t.codeInvalid) + verifyForm(t, userId, ""));
  show(200, `<p role="status">${escapeHtml(t.emailVerified)}</p>`);
}

function verifyForm(t: Texts, userId: string, code: string): string {
  return `<p>${escapeHtml(t.verifyEmailIntro)}</p>` +
    `<form method="post" action="${escapeHtml(VERIFY_EMAIL_PATH)}">` +
    `<input type="hidden" name="user" value="${escapeHtml(userId)}">` +
    `<label for="code">${escapeHtml(t.code)}</label>` +
    `<input id="code" name="code" autocomplete="one-time-code" required autofocus value="${escapeHtml(code)}">` +
    `<button type="submit">${escapeHtml(t.verify)}</button></form>`;
}

