import { createHmac } from "node:crypto";
import type { SignInProgress, SignInStep } from "./context.js";
import { sameToken } from "./form-token.js";
import { escapeHtml } from "./render.js";

/**
 * The forms after the first factor carry what the sign-in proved so far (the user, the
 * `amr`) with an HMAC under the interaction's form key: only the server makes one, for this
 * interaction, user, progress and step. A form cannot claim a step it did not pass, a proof
 * handed out by one step means nothing at another (the second factor's page cannot post to
 * the set-up), and a proof of one interaction means nothing in another.
 */

/** The steps after the first factor, each with proofs of its own. */
export type ProgressStep = "mfa" | "mfasetup" | "verifyemail" | "newpassword";

const MAX_AMR = 4;

function proofOf(s: SignInStep, p: SignInProgress, step: ProgressStep): string {
  return createHmac("sha256", s.c.csrfKey).update(`${s.details.uid}\nsign-in\n${step}\n${p.userId}\n${p.amr.join(" ")}`).digest("base64url");
}

/** The hidden fields of a step's form: the form token, the progress and its proof. */
export function progressFields(s: SignInStep, p: SignInProgress, step: ProgressStep): string {
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  return hidden("csrf", s.csrf) + hidden("user", p.userId) + hidden("amr", p.amr.join(" ")) + hidden("proof", proofOf(s, p, step));
}

/** The progress a posted form of `step` carries, when its proof holds. */
export function progressOf(s: SignInStep, form: Record<string, string>, step: ProgressStep): SignInProgress | undefined {
  const userId = (form.user ?? "").slice(0, 200);
  const amr = (form.amr ?? "").split(" ").filter(Boolean).slice(0, MAX_AMR);
  if (!userId || amr.length === 0) return undefined;
  const progress = { userId, amr };
  return sameToken(form.proof, proofOf(s, progress, step)) ? progress : undefined;
}
