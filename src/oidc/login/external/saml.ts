import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { appendSetCookie } from "../../../http/cookies.js";
import type { NodeRequest, NodeResponse } from "../../../http/respond.js";
import { idpWithSecret } from "../../../domain/idp/queries.js";
import { readSamlResponse, samlParties, samlPaths, samlRequest, spMetadata, type SamlParties } from "../../../upstream-idps/saml.js";
import { putRecordOnce, putRecord, takeRecord } from "../../adapters/login-records.js";
import { OAuthError, readForm } from "../../endpoints/oauth-response.js";
import { LOGIN_PATH } from "../kit/paths.js";
import { fallbackFrame, lookOf, type Frame } from "../view/look.js";
import { errorBody } from "../view/render.js";
import { sendPage } from "../view/send-page.js";
import { TEXTS, type Language } from "../view/texts/index.js";
import { clearBinding, hasBinding, isBound, newBinding } from "./browser-binding.js";
import type { StoredIdp } from "../../../upstream-idps/clients.js";
import { activeProvider } from "./providers.js";
import { backLink } from "./render.js";
import { autoPostPage, errorPage, isSecure, keepUpstreamUser, RESUBMITTED, resubmitPage, STATE_TTL_S, upstreamFailed, type ExternalContext } from "./return.js";
import { stateKey } from "./state.js";

/**
 * SAML 2.0 sign-in on the login pages (docs/oidc.md, "SAML"): the provider's button sends the
 * browser to the identity provider with an AuthnRequest (redirect, or a posted form); the
 * identity provider posts its response to the provider's assertion consumer service,
 * `/idps/<id>/saml/acs`, where it is checked (upstream-idps/saml.ts) and the person goes on to
 * the same decision as after any provider. The RelayState is the flow's state: it finds the
 * request the response must answer and the browser binding (browser-binding.ts, scoped to the
 * ACS path), which the identity provider's cross-site POST lacks until the page posts it
 * again from this origin, as Apple's form_post is (flow.ts, callback()).
 */

/** The model SAML flows are kept under in `oidc_payloads`, apart from OAuth's states. */
const SAML_STATE_MODEL = "SamlLoginState";
/** Assertion IDs seen, kept until the assertion expires. */
const SAML_ASSERTION_MODEL = "SamlAssertion";

interface SamlState {
  uid: string;
  /** The SHA-256 of the browser binding cookie's value. */
  binding: string;
  idpId: string;
  orgId: string;
  lang: Language;
  /** The AuthnRequest's ID: the response's InResponseTo must be it. */
  requestId: string;
}

function parties(c: ExternalContext, idp: StoredIdp, readsAssertions = false): SamlParties {
  const remember = (key: string, expiresAt: Date) => putRecordOnce(c.db, c.instanceId, SAML_ASSERTION_MODEL, key, {}, expiresAt);
  return samlParties(idp, c.box, c.issuer, c.calls.saml, readsAssertions ? remember : undefined);
}

/** The provider's button (flow.ts, start()): the browser goes to the identity provider with a new request. */
export async function startSaml(
  res: NodeResponse,
  c: ExternalContext,
  flow: { uid: string; orgId: string; lang: Language; frame: Frame; back: string },
  idp: StoredIdp,
): Promise<void> {
  let request;
  try {
    const state = randomBytes(32).toString("base64url");
    const key = stateKey(state);
    request = samlRequest(parties(c, idp), state);
    const binding = newBinding(key, samlPaths(idp.id).acs, STATE_TTL_S, isSecure(c));
    const record: SamlState = { uid: flow.uid, binding: binding.hash, idpId: idp.id, orgId: flow.orgId, lang: flow.lang, requestId: request.id };
    await putRecord(c.db, c.instanceId, SAML_STATE_MODEL, key, record, STATE_TTL_S);
    appendSetCookie(res, binding.setCookie);
  } catch (error) {
    return upstreamFailed(res, c, flow.frame, error, flow.back);
  }
  if ("post" in request) return autoPostPage(res, flow.frame, request.post.url, request.post.fields);
  (res as ServerResponse).writeHead(303, { location: request.redirect, "cache-control": "no-store", "referrer-policy": "no-referrer" });
  res.end();
}

/** `/idps/<id>/saml/metadata` (GET) and `/idps/<id>/saml/acs` (POST). */
export async function samlEndpoint(req: NodeRequest, res: NodeResponse, c: ExternalContext, idpId: string, which: string): Promise<void> {
  const method = which === "metadata" ? "GET" : "POST";
  if (req.method !== method) {
    res.setHeader("allow", method);
    return errorPage(res, 405, await fallbackFrame(c, req.headers["accept-language"]), (t) => t.loginExpired);
  }
  if (which === "metadata") return metadata(req, res, c, idpId);
  return consume(req, res, c, idpId);
}

/**
 * The SP metadata of a provider of this instance (or the system's), for the identity
 * provider's administrator: public, as every SP's metadata is, whatever the provider's state.
 */
async function metadata(req: NodeRequest, res: NodeResponse, c: ExternalContext, idpId: string): Promise<void> {
  const idp = await idpWithSecret(c.db, c.instanceId, idpId);
  if (idp?.type !== "saml") return errorPage(res, 404, await fallbackFrame(c, req.headers["accept-language"]), (t) => t.externalFailed);
  const xml = spMetadata(parties(c, idp));
  (res as ServerResponse).writeHead(200, {
    "content-type": "application/samlmetadata+xml; charset=utf-8",
    "content-length": Buffer.byteLength(xml),
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
  });
  res.end(xml);
}

/** The assertion consumer service: the identity provider's response, posted by the browser. */
async function consume(req: NodeRequest, res: NodeResponse, c: ExternalContext, idpId: string): Promise<void> {
  const fallback = async () => fallbackFrame(c, req.headers["accept-language"]);
  let form: Record<string, string>;
  try {
    form = await readForm(req, c.maxBodyBytes);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return errorPage(res, error.status, await fallback(), (t) => t.loginExpired);
  }
  const { [RESUBMITTED]: again, ...fields } = form;
  const key = fields.RelayState ? stateKey(fields.RelayState) : undefined;
  if (!key || !fields.SAMLResponse) return errorPage(res, 400, await fallback(), (t) => t.loginExpired);
  const acs = samlPaths(idpId).acs;
  if (again === undefined && !hasBinding(req.headers.cookie, key)) return resubmitPage(res, await fallback(), acs, fields);
  const record = await takeRecord<SamlState>(c.db, c.instanceId, SAML_STATE_MODEL, key);
  if (!record || record.idpId !== idpId) return errorPage(res, 400, await fallback(), (t) => t.loginExpired);
  appendSetCookie(res, clearBinding(key, acs, isSecure(c)));
  const frame = { lang: record.lang, look: await lookOf(c, { orgId: record.orgId }) };
  if (!isBound(req.headers.cookie, key, record.binding)) {
    c.logger.warn({ idpId, uid: record.uid }, "external login: a SAML response from a browser that did not start the login refused");
    return errorPage(res, 400, frame, (t) => t.externalOtherBrowser);
  }
  const t = TEXTS[record.lang];
  const back = `${LOGIN_PATH}/${record.uid}`;
  const idp = await activeProvider(c.db, c.instanceId, record.orgId, idpId);
  if (idp?.type !== "saml") return sendPage(res, 400, frame, () => [t.errorTitle, errorBody(t.externalFailed) + backLink(t, back)]);
  let signIn;
  try {
    signIn = await readSamlResponse(parties(c, idp, true), fields.SAMLResponse, record.requestId);
  } catch (error) {
    return upstreamFailed(res, c, frame, error, back);
  }
  if (!(await keepUpstreamUser(res, c, record, signIn.user))) sendPage(res, 400, frame, () => [t.errorTitle, errorBody(t.loginExpired) + backLink(t, back)]);
}
