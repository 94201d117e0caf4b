import { createHmac } from "node:crypto";
import type { SignInProgress, SignInStep } from "./context.js";
import { sameToken } from "./form-token.js";
import { escapeHtml } from "./render.js";

/**
 * The forms after the first factor carry what the sign-in proved so far (the user, the
 * `amr`) with an HMAC under the interaction's form key: only the server makes one, for this
 * interaction, user and progress. A form cannot claim a step it did not pass, and a proof
 * of one interaction means nothing in another.
 */

const MAX_AMR = 4;

function proofOf(s: SignInStep, p: SignInProgress): string {
  return createHmac("sha256", s.c.csrfKey).update(`${s.details.uid}\nsign-in\n${p.userId}\n${p.amr.join(" ")}`).digest("base64url");
}

/** The hidden fields of a step's form: the form token, the progress and its proof. */
export function progressFields(s: SignInStep, p: SignInProgress): string {
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  return hidden("csrf", s.csrf) + hidden("user", p.userId) + hidden("amr", p.amr.join(" ")) + hidden("proof", proofOf(s, p));
}

/** The progress a posted form carries, when its proof holds. */
export function progressOf(s: SignInStep, form: Record<string, string>): SignInProgress | undefined {
  const userId = (form.user ?? "").slice(0, 200);
  const amr = (form.amr ?? "").split(" ").filter(Boolean).slice(0, MAX_AMR);
  if (!userId || amr.length === 0) return undefined;
  const progress = { userId, amr };
  return sameToken(form.proof, proofOf(s, progress)) ? progress : undefined;
}
