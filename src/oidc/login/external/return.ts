import type { ServerResponse } from "node:http";
import type { SecretBox } from "../../../crypto/encryption.js";
import type { NodeResponse } from "../../../http/respond.js";
import type { Logger } from "../../../log/logger.js";
import { UpstreamError } from "../../../upstream-idps/fetch.js";
import type { Calls, ExternalUser } from "../../../upstream-idps/clients.js";
import { putRecord } from "../../adapters/login-records.js";
import type { LoginContext } from "../kit/context.js";
import { LOGIN_PATH } from "../kit/paths.js";
import { autoSubmitScriptTag } from "../view/assets.js";
import type { Frame } from "../view/look.js";
import { errorBody, escapeHtml } from "../view/render.js";
import { sendPage } from "../view/send-page.js";
import { TEXTS, type Texts } from "../view/texts/index.js";
import { LOGIN_MODEL, type LoginRecord } from "./pending-link.js";
import { loginOrgOf } from "./providers.js";
import { backLink } from "./render.js";

/**
 * What every way back from an identity provider shares (OAuth and OpenID Connect's callback
 * in flow.ts, SAML's assertion consumer service in saml.ts): the pages that post a form on,
 * the failure pages, and keeping the upstream user for the interaction's decision.
 */

export interface ExternalContext extends LoginContext {
  /** The issuer of the request's host: the callback is under it. */
  issuer: string;
  box: SecretBox;
  calls: Calls;
  logger: Logger;
  /** PLATFORM_IDP_INTENT_TTL: how long a succeeded intent's token is usable. */
  intentTtlMs: number;
}

/** How long a flow started upstream may take to come back. */
export const STATE_TTL_S = 10 * 60;
/** How long the upstream user waits for the interaction's decision. */
const LOGIN_TTL_S = 30 * 60;

/** The field the resubmitted form adds: a POST that has it is checked as it is, never resubmitted again. */
export const RESUBMITTED = "platform_resubmitted";

/**
 * A page whose form posts `fields` to `action`: by the script of assets.ts when scripts run,
 * else by the button. The fields are escaped and carried as they came; the answer is
 * no-store as every login page.
 */
export function autoPostPage(res: NodeResponse, frame: Frame, action: string, fields: Record<string, string>): void {
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("");
  sendPage(res, 200, frame, (t) => [
    t.continueOnward,
    `<form method="post" action="${escapeHtml(action)}" data-auto-submit>${hidden}<button type="submit">${escapeHtml(t.continueOnward)}</button></form>${autoSubmitScriptTag()}`,
  ]);
}

/**
 * A provider's cross-site POST back, which carries no SameSite=Lax binding cookie, posted
 * again to `action` from this origin, which does (flow.ts, callback()).
 */
export function resubmitPage(res: NodeResponse, frame: Frame, action: string, fields: Record<string, string>): void {
  autoPostPage(res, frame, action, { ...fields, [RESUBMITTED]: "1" });
}

/** An upstream that could not be used: a page saying so (502), the details in the log. */
export function upstreamFailed(res: NodeResponse, c: ExternalContext, frame: Frame, error: unknown, back: string): void {
  if (!(error instanceof UpstreamError)) throw error;
  c.logger.warn({ kind: error.kind, reason: error.message }, "external login: the identity provider could not be used");
  const t = TEXTS[frame.lang];
  const message = error.kind === "invalid" ? t.externalFailed : t.externalUnreachable;
  sendPage(res, 502, frame, () => [t.errorTitle, `${errorBody(message)}<p class="muted"><code>${escapeHtml(error.kind)}</code></p>${backLink(t, back)}`]);
}

export function errorPage(res: NodeResponse, status: number, frame: Frame, message: (t: Texts) => string): void {
  sendPage(res, status, frame, (t) => [t.errorTitle, errorBody(message(t))]);
}

export const isSecure = (c: ExternalContext) => c.issuer.startsWith("https:");

/**
 * The upstream user, checked, kept for the interaction that started the flow, whose pages
 * decide what becomes of it (flow.ts, decide()); false when the interaction is gone.
 */
export async function keepUpstreamUser(
  res: NodeResponse,
  c: ExternalContext,
  flow: { uid: string; idpId: string; orgId: string },
  user: ExternalUser,
): Promise<boolean> {
  const interaction = await c.provider.Interaction.find(flow.uid);
  if (!interaction) return false;
  const restricted = (await loginOrgOf(c.db, c.instanceId, interaction.params)).restricted;
  const login: LoginRecord = { idpId: flow.idpId, orgId: flow.orgId, restricted, user };
  await putRecord(c.db, c.instanceId, LOGIN_MODEL, flow.uid, login, LOGIN_TTL_S);
  (res as ServerResponse).writeHead(303, { location: `${LOGIN_PATH}/${flow.uid}/idp`, "cache-control": "no-store", "referrer-policy": "no-referrer" });
  res.end();
  return true;
}
