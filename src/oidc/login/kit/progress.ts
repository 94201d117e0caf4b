import { createHmac } from "node:crypto";
import { findUserRow } from "../../../domain/user/queries.js";
import type { UserRow } from "../../../store/schema.js";
import type { PromptStep, SignInProgress, SignInStep } from "./context.js";
import { sameToken } from "./form-token.js";
import { errorBody, escapeHtml } from "../view/render.js";

/**
 * The forms after the first factor carry what the sign-in proved so far (the user, the
 * `amr`) with an HMAC under the interaction's form key: only the server makes one, for this
 * interaction, user, progress and step. A form cannot claim a step it did not pass, a proof
 * handed out by one step means nothing at another (the second factor's page cannot post to
 * the set-up), and a proof of one interaction means nothing in another. An external account
 * waiting to be linked (`link`) rides along under the same proof until the sign-in ends.
 */

/** The steps after the first factor, each with proofs of its own. */
export type ProgressStep = "mfa" | "mfasetup" | "verifyemail" | "newpassword" | "passkeyoffer" | "keysetup";

const MAX_AMR = 4;

/** The longest `link` carried: a provider's id and an account id of up to 1,000 characters. */
const MAX_LINK = 1300;

function proofOf(s: SignInStep, p: SignInProgress, step: ProgressStep): string {
  return createHmac("sha256", s.c.csrfKey)
    .update(`${s.details.uid}\nsign-in\n${step}\n${p.userId}\n${p.amr.join(" ")}\n${p.link ?? ""}\n${p.first ?? ""}`)
    .digest("base64url");
}

/** The hidden fields of a step's form: the form token, the progress and its proof. */
export function progressFields(s: SignInStep, p: SignInProgress, step: ProgressStep): string {
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  const link = p.link ? hidden("link", p.link) : "";
  const first = p.first !== undefined ? hidden("first", String(p.first)) : "";
  return hidden("csrf", s.csrf) + hidden("user", p.userId) + hidden("amr", p.amr.join(" ")) + link + first + hidden("proof", proofOf(s, p, step));
}

/** The progress a posted form of `step` carries, when its proof holds. */
export function progressOf(s: SignInStep, form: Record<string, string>, step: ProgressStep): SignInProgress | undefined {
  const userId = (form.user ?? "").slice(0, 200);
  const amr = (form.amr ?? "").split(" ").filter(Boolean).slice(0, MAX_AMR);
  const link = (form.link ?? "").slice(0, MAX_LINK);
  const first = /^\d{1,12}$/.test(form.first ?? "") ? Number(form.first) : undefined;
  if (!userId || amr.length === 0) return undefined;
  const progress: SignInProgress = { userId, amr, ...(link && { link }), ...(first !== undefined && { first }) };
  return sameToken(form.proof, proofOf(s, progress, step)) ? progress : undefined;
}

/**
 * A step's posted form: its progress and the user, when the proof holds and the user may
 * still sign in. Otherwise the page that says why is sent (403) and this is undefined.
 */
export async function progressedUser(
  s: PromptStep,
  form: Record<string, string>,
  step: ProgressStep,
): Promise<{ p: SignInProgress; user: UserRow } | undefined> {
  const p = progressOf(s, form, step);
  const user = p && (await findUserRow(s.c.db, s.c.instanceId, p.userId));
  if (!p || !user) {
    s.show(403, s.t.errorTitle, errorBody(s.t.formExpired));
    return undefined;
  }
  if (user.state !== "active") {
    await s.askLoginName(403, "", s.t.userLocked);
    return undefined;
  }
  return { p, user };
}
