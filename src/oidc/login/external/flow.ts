import { createHmac } from "node:crypto";
import type { ServerResponse } from "node:http";
import { DomainError } from "../../../domain/errors.js";
import { addUser, patchUser } from "../../../domain/user/commands.js";
import { hasLinkTo, linkedUser, linkExternalAccount, refreshExternalAccount, usersWithVerifiedEmail } from "../../../domain/user/external-identities.js";
import { providerReaches } from "../../../domain/idp/login-use.js";
import { checkSignInPassword } from "../../../domain/user/password-check.js";
import { appendSetCookie } from "../../../http/cookies.js";
import type { NodeRequest, NodeResponse } from "../../../http/respond.js";
import { USERNAME_CONSTRAINT, violatedUniqueConstraint } from "../../../store/database.js";
import { OAuthError, readForm } from "../../endpoints/oauth-response.js";
import { loginLanguage } from "../view/language.js";
import type { LoginContext } from "../kit/context.js";
import { sameToken } from "../kit/form-token.js";
import { sendPage } from "../view/send-page.js";
import { errorBody, escapeHtml, fieldError, shownLoginName, type FormError } from "../view/render.js";
import { fallbackFrame, lookOf, type Look } from "../view/look.js";
import { LOGIN_PATH } from "../kit/paths.js";
import { TEXTS, type Language, type Texts } from "../view/texts/index.js";
import { loginUserById, userByLoginName, type LoginUser } from "../../../domain/user/login-names.js";
import { findUserRow } from "../../../domain/user/queries.js";
import { continueSignIn } from "../steps/sign-in.js";
import { pageActor, recordSignIn } from "../kit/page-origin.js";
import { stateRefusal, type SignInUser } from "../../../domain/audit/sign-ins.js";
import { settingsOf } from "../kit/org-settings.js";
import { clearBinding, hasBinding, isBound, newBinding } from "./browser-binding.js";
import { CALLBACK_PATH, STATE_MODEL, stateKey } from "./state.js";
import { finishIntent, type IntentState } from "./intents.js";
import { accountOf, linkKey, LOGIN_MODEL, type LoginRecord } from "./pending-link.js";
import { dropRecord, putRecord, readRecord, takeRecord } from "../../adapters/login-records.js";
import { activeProvider, loginOrgOf } from "./providers.js";
import { samlEndpoint, startSaml } from "./saml.js";
import { SAML_PATH } from "../../../upstream-idps/saml.js";
import { errorPage, isSecure, keepUpstreamUser, RESUBMITTED, resubmitPage, STATE_TTL_S, upstreamFailed, type ExternalContext } from "./return.js";
import { backLink, choices, createForm, ldapForm, linkForm, type NewAccountFields } from "./render.js";
import { ldapSignIn, type LdapConfig } from "../../../upstream-idps/ldap.js";
import { authorizationUrl, FORM_TYPES, newPending, redeem, upstreamOf, type ExternalUser, type Pending } from "../../../upstream-idps/clients.js";
import { refusedTry } from "../kit/rate-limit.js";

/**
 * External login (docs/oidc.md, "External login"): a provider's button on the login-name page
 * posts to `<login>/<uid>/idp/start`, which sends the browser upstream; the provider returns to
 * the one callback of the instance's host, `/ui/login/idp/callback`, where the state finds the
 * interaction, the code is redeemed and the upstream user kept with the interaction; then
 * `<login>/<uid>/idp` decides by the provider's options: sign in a linked user, propose an
 * account to link, create one, or offer the pages to create or link one.
 *
 * Everything in between lives in `oidc_payloads` (instance-scoped, expiring, swept), so any
 * process can continue the flow. The callback carries no interaction cookie (the provider
 * scopes it to the interaction's path): a cookie of its own binds it to the browser that
 * started the flow (browser-binding.ts), and the pages after it require the interaction's.
 * The same callback finishes the API's intents (intents.ts), told apart by their state.
 */

/** What the start keeps for the callback, under the state's hash. */
interface StateRecord extends Pending {
  uid: string;
  /** The SHA-256 of the value of the browser's binding cookie. */
  binding: string;
  idpId: string;
  orgId: string;
  lang: Language;
}

type Interaction = Awaited<ReturnType<LoginContext["provider"]["interactionDetails"]>>;

interface IdpOptions {
  isAutoCreation?: boolean;
  isManualCreationAllowed?: boolean;
  isManualLinkingAllowed?: boolean;
  isAutoUpdate?: boolean;
  autoLinking?: string;
}

/** Serves external login's paths; false for the other login paths. */
export async function externalLogin(req: NodeRequest, res: NodeResponse, c: ExternalContext): Promise<boolean> {
  const path = (req.url ?? "/").split("?", 1)[0]!;
  if (path === CALLBACK_PATH) {
    await callback(req, res, c);
    return true;
  }
  const saml = SAML_PATH.exec(path);
  if (saml) {
    await samlEndpoint(req, res, c, saml[1]!, saml[2]!);
    return true;
  }
  const [uid, section, action, ...rest] = path.slice(LOGIN_PATH.length + 1).split("/");
  if (section !== "idp" || !uid) return false;
  let details: Interaction;
  try {
    details = await c.provider.interactionDetails(req as never, res as never);
  } catch {
    await errorPage(res, 400, await fallbackFrame(c, req.headers["accept-language"]), (t) => t.loginExpired);
    return true;
  }
  const orgOfLogin = await loginOrgOf(c.db, c.instanceId, details.params);
  const [lang, look] = await Promise.all([
    loginLanguage(c.db, { instanceId: c.instanceId, orgId: orgOfLogin.orgId }, details.params.ui_locales as string | undefined, req.headers["accept-language"]),
    lookOf(c, { orgId: orgOfLogin.orgId, clientId: details.params.client_id }),
  ]);
  if (details.uid !== uid || rest.length > 0) {
    await errorPage(res, 404, { lang, look }, (t) => t.loginExpired);
    return true;
  }
  const step = new Step(req, res, c, details, lang, look);
  if (action === "start" && req.method === "POST") await step.start(orgOfLogin.orgId);
  else if (action === undefined && req.method === "GET") await step.decide();
  else if (action === "link" && (req.method === "GET" || req.method === "POST")) await step.link();
  else if (action === "create" && (req.method === "GET" || req.method === "POST")) await step.create();
  else if (action === "ldap" && req.method === "POST") await step.ldap(orgOfLogin.orgId);
  else await errorPage(res, 405, { lang, look }, (t) => t.loginExpired);
  return true;
}

/** The pages of one interaction after its cookie was checked. */
class Step {
  readonly t: Texts;
  readonly csrf: string;
  readonly base: string;

  constructor(
    readonly req: NodeRequest,
    readonly res: NodeResponse,
    readonly c: ExternalContext,
    readonly details: Interaction,
    readonly lang: Language,
    readonly look: Look,
  ) {
    this.t = TEXTS[lang];
    this.csrf = createHmac("sha256", c.csrfKey).update(details.uid).digest("base64url");
    this.base = `${LOGIN_PATH}/${details.uid}`;
  }

  show(status: number, title: string, body: string): void {
    sendPage(this.res, status, { lang: this.lang, look: this.look }, () => [title, body]);
  }

  fail(status: number, message: string): void {
    this.show(status, this.t.errorTitle, errorBody(message) + backLink(this.t, this.base));
  }

  /** A posted form with its token checked; undefined when a page was already sent. */
  async form(): Promise<Record<string, string> | undefined> {
    let form: Record<string, string>;
    try {
      form = await readForm(this.req, this.c.maxBodyBytes);
    } catch (error) {
      if (error instanceof OAuthError) return void this.fail(error.status, this.t.formExpired);
      throw error;
    }
    if (!sameToken(form.csrf, this.csrf)) return void this.fail(403, this.t.formExpired);
    return form;
  }

  /** The provider's button: the browser goes upstream with a new state, verifier and nonce. */
  async start(orgId: string): Promise<void> {
    const form = await this.form();
    if (!form) return;
    const idp = form.idpId ? await activeProvider(this.c.db, this.c.instanceId, orgId, form.idpId.slice(0, 200)) : undefined;
    if (!idp) return this.fail(404, this.t.externalFailed);
    if (FORM_TYPES.has(idp.type)) return this.askLdap(200, idp.id, idp.name, "");
    const frame = { lang: this.lang, look: this.look };
    if (idp.type === "saml") return startSaml(this.res, this.c, { uid: this.details.uid, orgId, lang: this.lang, frame, back: this.base }, idp);
    let location: string;
    try {
      const upstream = await upstreamOf(idp, this.c.box, this.c.calls);
      const pending = newPending();
      const key = stateKey(pending.state);
      const binding = newBinding(key, CALLBACK_PATH, STATE_TTL_S, isSecure(this.c));
      const record: StateRecord = { ...pending, uid: this.details.uid, binding: binding.hash, idpId: idp.id, orgId, lang: this.lang };
      await putRecord(this.c.db, this.c.instanceId, STATE_MODEL, key, record, STATE_TTL_S);
      location = authorizationUrl(upstream, pending, this.c.issuer + CALLBACK_PATH);
      appendSetCookie(this.res, binding.setCookie);
    } catch (error) {
      return upstreamFailed(this.res, this.c, frame, error, this.base);
    }
    (this.res as ServerResponse).writeHead(303, { location, "cache-control": "no-store", "referrer-policy": "no-referrer" });
    this.res.end();
  }

  askLdap(status: number, idpId: string, name: string, loginName: string, error?: FormError): void {
    this.show(
      status,
      this.t.externalSignInWith.replace("{name}", name),
      ldapForm(this.t, { action: `${this.base}/idp/ldap`, csrf: this.csrf, idpId, loginName, ...(error && { error }) }) + backLink(this.t, this.base),
    );
  }

  /**
   * An LDAP provider's form: the directory checks the login name and password (ldap.ts), and
   * the person it finds goes on as an upstream user of any other type, to the same decision.
   * The per-IP guard bounds guessing as on the password page; an unknown name and a wrong
   * password read alike.
   */
  async ldap(orgId: string): Promise<void> {
    const form = await this.form();
    if (!form) return;
    const idp = form.idpId ? await activeProvider(this.c.db, this.c.instanceId, orgId, form.idpId.slice(0, 200)) : undefined;
    if (!idp || !FORM_TYPES.has(idp.type)) return this.fail(404, this.t.externalFailed);
    const loginName = (form.loginName ?? "").trim().slice(0, 400);
    const password = form.password ?? "";
    const again = (status: number, error: FormError) => this.askLdap(status, idp.id, idp.name, loginName, error);
    // Per address, and per directory account: guessing one person's password from many addresses is bounded too.
    const wait = refusedTry(
      this.c.guards,
      `${this.c.instanceId} ${this.req.socket?.remoteAddress ?? ""}`,
      `${this.c.instanceId} ${idp.id} ${loginName.toLowerCase()}`,
    );
    if (wait !== undefined) {
      this.res.setHeader("retry-after", String(wait));
      return again(429, this.t.tooManyAttempts);
    }
    let checked;
    try {
      checked = await ldapSignIn(
        idp.config as unknown as LdapConfig,
        this.c.box.decrypt(idp.client_secret),
        loginName,
        password.slice(0, 1000),
        this.c.calls.ldap,
      );
    } catch (error) {
      return upstreamFailed(this.res, this.c, { lang: this.lang, look: this.look }, error, this.base);
    }
    if (!checked.ok) {
      recordSignIn(this, { method: "idp", outcome: checked.reason });
      return again(401, this.t.externalLdapRefused);
    }
    if (!(await keepUpstreamUser(this.res, this.c, { uid: this.details.uid, idpId: idp.id, orgId }, checked.user))) this.fail(400, this.t.loginExpired);
  }

  async loginRecord(): Promise<LoginRecord | undefined> {
    const record = await readRecord<LoginRecord>(this.c.db, this.c.instanceId, LOGIN_MODEL, this.details.uid);
    if (!record) this.fail(400, this.t.loginExpired);
    return record;
  }

  async options(record: LoginRecord): Promise<IdpOptions | undefined> {
    const idp = await activeProvider(this.c.db, this.c.instanceId, record.orgId, record.idpId);
    if (!idp) this.fail(400, this.t.externalFailed);
    return idp?.view.options as IdpOptions | undefined;
  }

  /** After the callback: the provider's options decide what happens to the upstream user. */
  async decide(): Promise<void> {
    const record = await this.loginRecord();
    if (!record) return;
    const options = await this.options(record);
    if (!options) return;
    const { user } = record;
    const linked = await linkedUser(this.c.db, this.c.instanceId, record.idpId, user.id);
    if (linked) {
      const account = { id: linked.userId, orgId: linked.orgId };
      const inactive = !linked.orgActive || linked.state === "inactive";
      if (
        inactive ||
        (record.restricted && linked.orgId !== record.orgId) ||
        !(await providerReaches(this.c.db, this.c.instanceId, linked.orgId, record.idpId))
      ) {
        recordSignIn(this, { method: "idp", outcome: inactive ? "inactive" : "not_allowed", user: account });
        return this.fail(403, this.t.unknownUser);
      }
      if (linked.state === "locked") {
        recordSignIn(this, { method: "idp", outcome: "locked", user: account });
        return this.fail(403, this.t.userLocked);
      }
      if (options.isAutoUpdate) await this.update(linked.userId, user);
      await refreshExternalAccount(this.c.db, this.c.instanceId, accountOf(record));
      return this.finish(account);
    }
    const candidate = await this.candidate(record, options);
    if (candidate) return this.askLink(200, record, options, candidate);
    if (options.isAutoCreation) {
      const created = await this.createUser(record, fieldsOf(user));
      if (created.ok) return this.finish({ id: created.userId, orgId: record.orgId });
      if (!options.isManualCreationAllowed) return this.fail(409, created.message);
      return this.askCreate(409, fieldsOf(user), created.message);
    }
    const links = [
      ...(options.isManualCreationAllowed ? [{ href: `${this.base}/idp/create`, label: this.t.externalCreateNew }] : []),
      ...(options.isManualLinkingAllowed ? [{ href: `${this.base}/idp/link`, label: this.t.externalLinkExisting }] : []),
    ];
    if (links.length === 0) return this.fail(403, this.t.externalNoAccount);
    this.show(200, this.t.externalAccountTitle, choices(this.t, [...links, { href: this.base, label: this.t.externalBack }], this.t.externalNotLinked));
  }

  /** The account auto linking proposes: exactly one active user by username or verified email, not linked to this provider yet. */
  async candidate(record: LoginRecord, options: IdpOptions): Promise<{ id: string; loginName: string; username: string } | undefined> {
    const { user } = record;
    const orgId = record.restricted ? record.orgId : undefined;
    let found: LoginUser | undefined;
    if (options.autoLinking === "AUTO_LINKING_OPTION_USERNAME" && user.username) {
      found = await userByLoginName(this.c.db, this.c.instanceId, user.username, orgId);
    } else if (options.autoLinking === "AUTO_LINKING_OPTION_EMAIL" && user.email && user.emailVerified) {
      const ids = await usersWithVerifiedEmail(this.c.db, this.c.instanceId, user.email, orgId);
      if (ids.length === 1) found = await loginUserById(this.c.db, this.c.instanceId, ids[0]!);
    }
    if (found?.state !== "active" || (await hasLinkTo(this.c.db, this.c.instanceId, found.id, record.idpId))) return undefined;
    if (!(await providerReaches(this.c.db, this.c.instanceId, found.orgId, record.idpId))) return undefined;
    return { id: found.id, loginName: found.loginName, username: found.row.username };
  }

  askLink(status: number, record: LoginRecord, options: IdpOptions, candidate: { loginName: string; username?: string } | undefined, error?: FormError): void {
    const fixed = candidate !== undefined && !options.isManualLinkingAllowed;
    const intro = candidate ? this.t.externalLinkProposal : this.t.externalLinkManual;
    const create = options.isManualCreationAllowed
      ? `<p><a href="${escapeHtml(`${this.base}/idp/create`)}">${escapeHtml(this.t.externalCreateNew)}</a></p>`
      : "";
    this.show(
      status,
      this.t.externalLinkTitle,
      linkForm(this.t, {
        action: `${this.base}/idp/link`,
        csrf: this.csrf,
        loginName: candidate?.loginName ?? "",
        shownName: shownLoginName(this.look, candidate?.loginName ?? "", candidate?.username ?? candidate?.loginName ?? ""),
        fixed,
        intro,
        ...(error && { error }),
      }) +
        create +
        backLink(this.t, this.base),
    );
  }

  /**
   * Linking an existing account, proven by its password. Without manual linking only the
   * account auto linking proposes may be linked, whatever login name the form carries.
   */
  async link(): Promise<void> {
    const record = await this.loginRecord();
    if (!record) return;
    const options = await this.options(record);
    if (!options) return;
    const candidate = await this.candidate(record, options);
    if (!candidate && !options.isManualLinkingAllowed) return this.fail(403, this.t.externalNoAccount);
    if (this.req.method === "GET") return this.askLink(200, record, options, candidate);
    const form = await this.form();
    if (!form) return;
    const loginName = options.isManualLinkingAllowed ? (form.loginName ?? "").slice(0, 400) : candidate!.loginName;
    const user = loginName ? await userByLoginName(this.c.db, this.c.instanceId, loginName, record.restricted ? record.orgId : undefined) : undefined;
    const again = (status: number, error: FormError) => this.askLink(status, record, options, candidate ?? { loginName }, error);
    // A user the provider does not reach reads as unknown, before any password is checked.
    const reached = user !== undefined && user.state !== "inactive" && (await providerReaches(this.c.db, this.c.instanceId, user.orgId, record.idpId));
    const refused = !user ? "unknown_name" : !reached ? (user.state === "inactive" ? "inactive" : "not_allowed") : stateRefusal(user.state);
    if (refused) recordSignIn(this, { method: "password", outcome: refused, ...(user && { user }) });
    if (!user || !reached) return again(401, fieldError("loginName", this.t.unknownUser));
    if (user.state === "locked") return again(403, this.t.userLocked);
    const { guards } = this.c;
    const wait = refusedTry(guards, `${this.c.instanceId} ${this.req.socket?.remoteAddress ?? ""}`, `${this.c.instanceId} ${user.id}`);
    if (wait !== undefined) {
      this.res.setHeader("retry-after", String(wait));
      return again(429, this.t.tooManyAttempts);
    }
    const maxAttempts = async () => (await settingsOf(this.c, user.orgId)).maxPasswordAttempts;
    const checked = await checkSignInPassword(this.c, this.c.hasher, this.c.instanceId, user, form.password, maxAttempts);
    recordSignIn(this, { method: "password", outcome: checked.ok ? "succeeded" : "wrong_password", user });
    if (!checked.ok) return again(checked.locked ? 403 : 401, checked.locked ? this.t.userLocked : fieldError("password", this.t.wrongPassword));
    if (await hasLinkTo(this.c.db, this.c.instanceId, user.id, record.idpId)) return again(409, this.t.externalAlreadyLinked);
    // The link is written when the sign-in ends with every factor the person needs (pending-link.ts).
    await continueSignIn(this, { userId: user.id, amr: ["pwd", "fed"], link: linkKey(record) });
  }

  askCreate(status: number, values: NewAccountFields, message?: string): void {
    const error = message === this.t.externalUsernameTaken ? fieldError("username", message) : message;
    this.show(
      status,
      this.t.externalCreateTitle,
      createForm(this.t, { action: `${this.base}/idp/create`, csrf: this.csrf, values, ...(error && { error }) }) + backLink(this.t, this.base),
    );
  }

  /** A new account from the confirmed (or corrected) claims of the provider. */
  async create(): Promise<void> {
    const record = await this.loginRecord();
    if (!record) return;
    const options = await this.options(record);
    if (!options) return;
    if (!options.isManualCreationAllowed) return this.fail(403, this.t.externalNoAccount);
    if (this.req.method === "GET") return this.askCreate(200, fieldsOf(record.user));
    const form = await this.form();
    if (!form) return;
    const values: NewAccountFields = {
      username: (form.username ?? "").trim().slice(0, 200),
      givenName: (form.givenName ?? "").trim().slice(0, 200),
      familyName: (form.familyName ?? "").trim().slice(0, 200),
      email: (form.email ?? "").trim().slice(0, 200),
    };
    if (!values.username || !values.givenName || !values.familyName || !/^[^@\s]+@[^@\s]+$/.test(values.email))
      return this.askCreate(400, values, this.t.externalFieldsRequired);
    const created = await this.createUser(record, values);
    if (!created.ok) return this.askCreate(409, values, created.message);
    return this.finish({ id: created.userId, orgId: record.orgId });
  }

  /**
   * Creates a human user in the login's organization, linked to the external account, in one
   * transaction. The email counts as verified only when it is the one the provider verified.
   */
  async createUser(record: LoginRecord, values: NewAccountFields): Promise<{ ok: true; userId: string } | { ok: false; message: string }> {
    const { user } = record;
    if (!values.username || !values.email) return { ok: false, message: this.t.externalFieldsRequired };
    const verified = user.emailVerified && values.email.toLowerCase() === user.email.toLowerCase();
    const displayName =
      user.displayName && values.givenName === user.givenName && values.familyName === user.familyName
        ? user.displayName
        : `${values.givenName} ${values.familyName}`.trim();
    try {
      const userId = await this.c.transact(async (tx) => {
        const actor = pageActor(this, "system");
        const { id } = await addUser(tx, actor, record.orgId, {
          username: values.username,
          type: {
            kind: "human",
            profile: {
              givenName: values.givenName,
              familyName: values.familyName,
              displayName,
              nickName: "",
              preferredLanguage: user.preferredLanguage,
              gender: undefined,
            },
            email: { address: values.email, verified },
            // LDAP's phone attribute, as unverified as its mail.
            phone: user.phone && PHONE.test(user.phone) ? { number: user.phone, verified: false } : undefined,
            passwordHash: undefined,
            passwordChangeRequired: false,
          },
        });
        await linkExternalAccount(tx, actor, id, accountOf(record));
        return id;
      });
      return { ok: true, userId };
    } catch (error) {
      if (error instanceof DomainError && error.kind === "already_exists")
        return { ok: false, message: /username/.test(error.message) ? this.t.externalUsernameTaken : this.t.externalAlreadyLinked };
      // A concurrent sign-up took the username after addUser's check (the user row goes with the commit).
      if (violatedUniqueConstraint(error) === USERNAME_CONSTRAINT) return { ok: false, message: this.t.externalUsernameTaken };
      if (error instanceof DomainError && error.kind === "failed_precondition") return { ok: false, message: this.t.externalUsernameTaken };
      if (error instanceof DomainError && error.kind === "not_found") return { ok: false, message: this.t.externalFailed };
      throw error;
    }
  }

  /** Auto update: names and email follow the provider's on every login (events as any change of the user). */
  async update(userId: string, external: ExternalUser): Promise<void> {
    const current = await findUserRow(this.c.db, this.c.instanceId, userId);
    if (!current) return;
    const sameEmail = (current.email ?? "").toLowerCase() === external.email.toLowerCase();
    const email =
      external.email && (!sameEmail || (external.emailVerified && !current.email_verified))
        ? { address: external.email, verified: external.emailVerified }
        : undefined;
    const human = {
      ...(external.givenName && { givenName: external.givenName }),
      ...(external.familyName && { familyName: external.familyName }),
      ...(external.displayName && { displayName: external.displayName }),
      ...(email && { email }),
    };
    if (Object.keys(human).length === 0) return;
    await this.c.transact((tx) => patchUser(tx, pageActor(this, userId), userId, { human }));
  }

  /**
   * The end of an external login, for the account linked or created: the upstream user is
   * used once (a second finish of the same interaction finds nothing), and the sign-in goes
   * on as any other (sign-in.ts: a forced second factor, a verified email).
   */
  async finish(account: SignInUser): Promise<void> {
    recordSignIn(this, { method: "idp", outcome: "succeeded", user: account });
    await dropRecord(this.c.db, this.c.instanceId, LOGIN_MODEL, this.details.uid);
    await continueSignIn(this, { userId: account.id, amr: ["fed"] });
  }
}

/**
 * The provider's return: the state is taken (once: a replayed or foreign state finds
 * nothing), the browser checked to be the one that started the flow, the code redeemed,
 * the upstream user kept for the interaction's pages.
 *
 * Most providers come back with a GET (a top-level navigation, which carries the binding's
 * SameSite=Lax cookie). Apple comes back with a POST (response_mode=form_post), from its own
 * site: a cross-site POST, which carries no Lax cookie. Rather than weakening the cookie to
 * SameSite=None (sent with every cross-site request to the callback, and needing HTTPS, so a
 * local setup over http would lose the binding), such a POST without the cookie is answered a
 * page that posts the same fields again to the callback from this origin (resubmitPage): a
 * same-site request, which carries the cookie, so the binding is checked as for any provider.
 * The page reflects only what was posted, and a POST that comes back without the cookie again
 * is checked (and refused) as any other: it cannot loop, and a delivered state still needs
 * the browser that started its flow.
 */
async function callback(req: NodeRequest, res: NodeResponse, c: ExternalContext): Promise<void> {
  if (req.method !== "GET" && req.method !== "POST") return errorPage(res, 405, await fallbackFrame(c, req.headers["accept-language"]), (t) => t.loginExpired);
  let params = new URL(req.url ?? "/", "http://x").searchParams;
  let postedUser: string | undefined;
  if (req.method === "POST") {
    let form: Record<string, string>;
    try {
      form = await readForm(req, c.maxBodyBytes);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      return errorPage(res, error.status, await fallbackFrame(c, req.headers["accept-language"]), (t) => t.loginExpired);
    }
    const { [RESUBMITTED]: again, ...fields } = form;
    const posted = fields.state ? stateKey(fields.state) : undefined;
    if (posted && again === undefined && !hasBinding(req.headers.cookie, posted))
      return resubmitPage(res, await fallbackFrame(c, req.headers["accept-language"]), CALLBACK_PATH, fields);
    params = new URLSearchParams(fields);
    postedUser = fields.user;
  }
  const state = params.get("state");
  const key = state ? stateKey(state) : undefined;
  const record = key ? await takeRecord<StateRecord | IntentState>(c.db, c.instanceId, STATE_MODEL, key) : undefined;
  if (!record) return errorPage(res, 400, await fallbackFrame(c, req.headers["accept-language"]), (t) => t.loginExpired);
  if ("intentId" in record) {
    // An intent of the API (intents.ts): the login UI's success or failure URL is next.
    const location = await finishIntent(c, record, params, postedUser);
    if (!location) return errorPage(res, 400, await fallbackFrame(c, req.headers["accept-language"]), (t) => t.loginExpired);
    (res as ServerResponse).writeHead(303, { location, "cache-control": "no-store", "referrer-policy": "no-referrer" });
    return void res.end();
  }
  appendSetCookie(res, clearBinding(key!, CALLBACK_PATH, isSecure(c)));
  if (!isBound(req.headers.cookie, key!, record.binding)) {
    // Consumed above and never redeemed: the code is worthless to whoever delivered it.
    c.logger.warn({ idpId: record.idpId, uid: record.uid }, "external login: callback from a browser that did not start the login refused");
    return errorPage(res, 400, { lang: record.lang, look: await lookOf(c, { orgId: record.orgId }) }, (t) => t.externalOtherBrowser);
  }
  const t = TEXTS[record.lang];
  const back = `${LOGIN_PATH}/${record.uid}`;
  const frame = { lang: record.lang, look: await lookOf(c, { orgId: record.orgId }) };
  const fail = (status: number, message: string) => sendPage(res, status, frame, () => [t.errorTitle, errorBody(message) + backLink(t, back)]);
  const code = params.get("code");
  const upstreamError = params.get("error");
  // Apple's own code for a cancelled sign-in; the others' is OAuth's.
  if (upstreamError || !code)
    return fail(400, upstreamError === "access_denied" || upstreamError === "user_cancelled_authorize" ? t.externalCancelled : t.externalFailed);
  const idp = await activeProvider(c.db, c.instanceId, record.orgId, record.idpId);
  if (!idp) return fail(400, t.externalFailed);
  let user: ExternalUser;
  try {
    const upstream = await upstreamOf(idp, c.box, c.calls);
    ({ user } = await redeem(upstream, c.calls, code, record, c.issuer + CALLBACK_PATH, postedUser));
  } catch (error) {
    return upstreamFailed(res, c, frame, error, back);
  }
  if (!(await keepUpstreamUser(res, c, record, user))) fail(400, t.loginExpired);
}

/** A phone attribute worth keeping: digits with the usual separators, as the user API accepts. */
const PHONE = /^\+?[0-9][0-9 ().-]{2,30}$/;

function fieldsOf(user: ExternalUser): NewAccountFields {
  return { username: user.username || user.email, givenName: user.givenName || user.username, familyName: user.familyName, email: user.email };
}
