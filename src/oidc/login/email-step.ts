import { createHmac } from "node:crypto";
import { DomainError } from "../../domain/errors.js";
import { requestVerification, verifyContact } from "../../domain/user/verification.js";
import type { PromptStep } from "./context.js";
import { finishLogin } from "./finish.js";
import { sameToken } from "./form-token.js";
import { takeAddressTry } from "./rate-limit.js";
import { errorBody, escapeHtml } from "./render.js";

/**
 * The email verification step of a sign-in, when the login settings say
 * `require_verified_email`: after the password (or a registration) a person whose address is
 * not verified gets a code and must give it before the login finishes. The forms carry a
 * proof that this interaction's person passed the password step: an HMAC under the
 * interaction's form key, so only the server makes it, for this interaction and user.
 */
const proofOf = (s: PromptStep, userId: string) => createHmac("sha256", s.c.csrfKey).update(`${s.details.uid}\npassword-passed\n${userId}`).digest("base64url");

/** Whether the user has an email address that is not verified (then the step is due). */
export async function emailUnverified(s: PromptStep, userId: string): Promise<boolean> {
  const row = await s.c.db.selectFrom("users").select(["email", "email_verified"]).where("instance_id", "=", s.c.instanceId).where("id", "=", userId).executeTakeFirst();
  return Boolean(row?.email) && row?.email_verified !== true;
}

/** Sends a code (unless `send` is false) and asks for it. */
export async function askEmailCode(s: PromptStep, userId: string, send: boolean, status = 200, error?: string): Promise<void> {
  if (send) {
    await s.c
      .transact((tx) => requestVerification(tx, { instanceId: s.c.instanceId, userId }, s.c.codes, userId, "email", false))
      // Verified meanwhile, or no address any more: the code's check below says so.
      .catch((e: unknown) => {
        if (!(e instanceof DomainError)) throw e;
      });
  }
  const hidden = (extra = "") =>
    `<input type="hidden" name="csrf" value="${escapeHtml(s.csrf)}"><input type="hidden" name="user" value="${escapeHtml(userId)}">` +
    `<input type="hidden" name="proof" value="${escapeHtml(proofOf(s, userId))}">${extra}`;
  const action = escapeHtml(`${s.base}/verifyemail`);
  s.show(status, s.t.verifyEmailTitle,
    (error ? errorBody(error) : "") +
    `<p>${escapeHtml(s.t.verifyEmailIntro)}</p><form method="post" action="${action}">${hidden()}` +
    `<label for="code">${escapeHtml(s.t.code)}</label><input id="code" name="code" autocomplete="one-time-code" required autofocus>` +
    `<button type="submit">${escapeHtml(s.t.verify)}</button></form>` +
    `<form method="post" action="${action}">${hidden('<input type="hidden" name="resend" value="1">')}<button type="submit">${escapeHtml(s.t.sendCode)}</button></form>`);
}

/** The code (or a request for another one) of the step; a right code finishes the login. */
export async function emailCodeSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const userId = (form.user ?? "").slice(0, 200);
  if (!userId || !sameToken(form.proof, proofOf(s, userId))) return s.show(403, s.t.errorTitle, errorBody(s.t.formExpired));
  if (!takeAddressTry(s.c.guards.perIp, s.req, s.res, s.c.instanceId, "code")) return askEmailCode(s, userId, false, 429, s.t.tooManyAttempts);
  if (form.resend) return askEmailCode(s, userId, true);
  const code = (form.code ?? "").slice(0, 64);
  const verified = code ? await s.c.transact((tx) => verifyContact(tx, { instanceId: s.c.instanceId, userId }, s.c.codes, userId, "email", code)) : undefined;
  if (!verified) return askEmailCode(s, userId, false, 400, s.t.codeInvalid);
  const user = await s.c.db.selectFrom("users").select("state").where("instance_id", "=", s.c.instanceId).where("id", "=", userId).executeTakeFirst();
  if (user?.state !== "active") return s.show(403, s.t.errorTitle, errorBody(s.t.loginExpired));
  await finishLogin(s.req, s.res, s.c, userId);
}
