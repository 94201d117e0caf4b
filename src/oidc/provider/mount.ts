import type { IncomingMessage, ServerResponse } from "node:http";
import { decodeJwt } from "jose";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import type { Config } from "../../config/config.js";
import type { NodeRequest, NodeResponse } from "../../http/respond.js";
import { requestSignal } from "../../http/request-signal.js";
import type { Logger } from "../../log/logger.js";
import type { TenantResolver } from "../../server/tenant-resolver.js";
import { TooManyUnknownLookups } from "../../cache/unknown-lookups.js";
import type { Store } from "../../store/database.js";
import type { SecretBox } from "../../crypto/encryption.js";
import type { PasswordHasher } from "../../crypto/passwords.js";
import { JWT_BEARER } from "../models/clients.js";
import { loginPages } from "../login/steps/pages.js";
import { codePages } from "../login/steps/code-pages.js";
import { serveLoginAsset } from "../login/view/assets.js";
import type { VerificationSettings } from "../../domain/user/code-messages.js";
import { loginSettingsKind } from "../../domain/settings/login.js";
import { externalLogin } from "../login/external/flow.js";
import { SAML_PATH } from "../../upstream-idps/saml.js";
import type { Calls } from "../../upstream-idps/clients.js";
import type { ActionFunctions } from "../../engines/actions/functions.js";
import { LOGIN_PATH } from "../login/kit/paths.js";
import { WindowLimiter } from "../../http/window-limiter.js";
import type { EndpointContext } from "../endpoints/context.js";
import { introspect } from "../endpoints/introspection.js";
import { TOKEN_EXCHANGE_REPEATABLE } from "../endpoints/grants/token-exchange.js";
import { OAuthError, readForm, sendJson, sendOAuthError } from "../endpoints/oauth-response.js";
import type { OidcLookups } from "../helpers/lookups.js";
import { revoke } from "../endpoints/revocation.js";
import { userinfo } from "../endpoints/userinfo.js";
import { payloadAdapters } from "../adapters/payload-adapter.js";
import type { Providers } from "./providers.js";
import { inRequestScope } from "./request-scope.js";
import { DISCOVERY_PATH, OIDC_ROUTES } from "./routes.js";
import { recordRefusedAssertion } from "../helpers/token-sign-ins.js";
import type { SignInRecorder } from "../../domain/audit/sign-ins.js";
import type { SigningKeys } from "../models/signing-keys.js";

type Served = "provider" | "token" | "login" | typeof introspect;

/** The Host's instance; too many unknown hosts from one address are the OAuth error 429. */
async function resolveTenant(tenants: TenantResolver, host: string, signal: AbortSignal, address: string | undefined) {
  try {
    return await tenants.resolve(new URL(`http://${host}`).hostname.toLowerCase(), signal, address);
  } catch (error) {
    if (!(error instanceof TooManyUnknownLookups)) throw error;
    throw new OAuthError(429, "invalid_request", error.rawMessage, { "retry-after": String(error.retryAfterS) });
  }
}

/** What answers each path. */
const PATHS = new Map<string, Served>([
  [DISCOVERY_PATH, "provider"],
  [OIDC_ROUTES.jwks, "provider"],
  [OIDC_ROUTES.token, "token"],
  [OIDC_ROUTES.introspection, introspect],
  [OIDC_ROUTES.revocation, revoke],
  [OIDC_ROUTES.userinfo, userinfo],
]);

const TOKEN_PARAMS_REPEATABLE: ReadonlySet<string> = new Set(TOKEN_EXCHANGE_REPEATABLE);

function servedAt(path: string): Served | undefined {
  const exact = PATHS.get(path);
  if (exact) return exact;
  // The authorization endpoint and its resumption after a login (`/oauth/v2/authorize/<uid>`),
  // end session with its confirmation and success pages.
  if (path === OIDC_ROUTES.authorization || path.startsWith(`${OIDC_ROUTES.authorization}/`)) return "provider";
  if (path === OIDC_ROUTES.end_session || path.startsWith(`${OIDC_ROUTES.end_session}/`)) return "provider";
  if (path.startsWith(`${LOGIN_PATH}/`)) return "login";
  // A SAML provider's SP metadata and assertion consumer service (login/external/saml.ts).
  if (SAML_PATH.test(path)) return "login";
  return undefined;
}

/** The scheme of every issuer: https with a certificate, else the external URL's (a TLS-terminating proxy). */
export const issuerScheme = (config: Pick<Config, "tls" | "externalUrl">) => (config.tls ? "https" : config.externalUrl.protocol.replace(":", ""));

export interface OidcMountDeps {
  config: Config;
  store: Store;
  logger: Logger;
  tenants: TenantResolver;
  providers: Providers;
  keys: SigningKeys;
  access: AccessEpoch;
  box: SecretBox;
  hasher: PasswordHasher;
  lookups: OidcLookups;
  /** Upstream identity providers of external login (login/external/, through the outbound client), shared with the API's intents. */
  calls: Calls;
  /** Action functions that add claims to userinfo (preuserinfo). */
  functions: ActionFunctions;
  /** Codes by message, which the login pages send and check. */
  codes: VerificationSettings;
  /** Password and code attempts per user, shared with the session API (PLATFORM_LOGIN_RATE_PER_LOGIN_NAME). */
  perUser: WindowLimiter;
  /** The audit log's sign-in events: the login pages' and the token endpoint's. */
  signIns: SignInRecorder;
}

/**
 * The OpenID Connect and OAuth 2.0 endpoints at the spec's paths, for the instance the Host
 * selects, whose issuer is the external URL's scheme with the request's host. Returns false
 * for paths that are not ours.
 */
export function oidcMount(deps: OidcMountDeps) {
  const { config, store, logger, tenants, providers, keys } = deps;
  const scheme = issuerScheme(config);
  const guards = {
    perIp: new WindowLimiter(config.login.perIpPerMinute, 60_000),
    perLoginName: deps.perUser,
    loginSettings: loginSettingsKind(config.login),
    sessionTtlS: config.oidc.refreshTokenTtlS,
  };
  const { calls } = deps;

  return async function serve(req: NodeRequest, res: NodeResponse, host: string): Promise<boolean> {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    const served = servedAt(path);
    if (!served) return false;
    // The pages' static script is the same for every instance: no lookup, no database.
    if (served === "login" && serveLoginAsset(req, res)) return true;
    const signal = requestSignal(res);
    try {
      const instance = await resolveTenant(tenants, host, signal, req.socket.remoteAddress);
      if (!instance) throw new OAuthError(404, "invalid_request", `no instance serves the host "${host}"`);
      if (instance.blocked) throw new OAuthError(429, "access_denied", "the instance is blocked");
      const issuer = `${scheme}://${host.toLowerCase()}`;
      const { db, transact } = store.forRequest(signal);
      if (served === "login") {
        const { provider } = await providers.get(issuer, instance.id);
        const csrfKey = deps.box.derive(`login-forms:${instance.id}`);
        const login = {
          db,
          transact,
          guards,
          accessChanged: () => deps.access.advance(),
          instanceId: instance.id,
          provider,
          hasher: deps.hasher,
          csrfKey,
          maxBodyBytes: config.maxBodyBytes,
          codes: deps.codes,
          resetAnswerMs: config.notifications.resetAnswerMs,
          signIns: deps.signIns,
        };
        await inRequestScope({ db, jwtBearer: false }, async () => {
          if (await externalLogin(req, res, { ...login, issuer, box: deps.box, calls, logger, intentTtlMs: config.externalLogin.intentTtlMs })) return;
          if (!(await codePages(req, res, login))) await loginPages(req, res, login);
        });
        return true;
      }
      if (served === "provider" || served === "token") {
        const signIns = { db: () => db, instanceId: instance.id, signIns: deps.signIns };
        const jwtBearer =
          served === "token" &&
          (await prepareTokenRequest(
            req,
            config.maxBodyBytes,
            (sub) => deps.lookups.machine(db, instance.id, { userId: sub }),
            (sub) => recordRefusedAssertion(signIns, req as IncomingMessage, sub),
          ));
        const { handle } = await providers.get(issuer, instance.id);
        await inRequestScope({ db, jwtBearer }, () => handle(req as IncomingMessage, res as ServerResponse));
        return true;
      }
      const Payloads = payloadAdapters(() => db, instance.id, deps.access);
      const context: EndpointContext = {
        db,
        instanceId: instance.id,
        issuer,
        keys: () => keys.get(instance.id),
        adapter: (model) => new Payloads(model),
        maxBodyBytes: config.maxBodyBytes,
        lookups: deps.lookups,
        functions: deps.functions,
        access: deps.access,
      };
      await served(req, res, context);
    } catch (error) {
      if (error instanceof OAuthError) sendOAuthError(res, error);
      else {
        logger.error({ err: error, path }, "OpenID Connect endpoint failed");
        if (!res.headersSent) sendJson(res, 500, { error: "server_error", error_description: "internal error" });
      }
    }
    return true;
  };
}

/**
 * The token request's body is read here, bounded, and handed to the provider parsed (it
 * uses a parsed body when it finds one). A jwt-bearer request without client
 * authentication names its client by the assertion's subject: the machine user proves
 * itself by the assertion, which the grant verifies (grants/jwt-bearer.ts). An assertion
 * refused here is a sign-in attempt too: `refused` records it first.
 */
async function prepareTokenRequest(
  req: NodeRequest,
  limit: number,
  partyOf: (userId: string) => Promise<{ keys: unknown[] } | undefined>,
  refused: (sub: string | undefined) => Promise<void>,
): Promise<boolean> {
  if (
    req.method !== "POST" ||
    !String(req.headers["content-type"] ?? "")
      .toLowerCase()
      .startsWith("application/x-www-form-urlencoded")
  )
    return false;
  const form = await readForm(req, limit, TOKEN_PARAMS_REPEATABLE);
  (req as NodeRequest & { body?: unknown }).body = form;
  if (form.grant_type !== JWT_BEARER) return false;
  if (req.headers.authorization === undefined && form.client_id === undefined && form.client_assertion === undefined && form.assertion) {
    // No client authenticates here: an assertion that names no machine user able to sign
    // it is an invalid grant (RFC 7523 section 3.1), not a failed client authentication.
    let sub: string | undefined;
    try {
      sub = decodeJwt(form.assertion).sub;
    } catch {
      // handled below
    }
    if (!sub) {
      await refused(undefined);
      throw new OAuthError(400, "invalid_grant", "the assertion is not a JWT with a subject");
    }
    const party = await partyOf(sub);
    if (!party || party.keys.length === 0) {
      await refused(sub);
      throw new OAuthError(400, "invalid_grant", "the assertion's subject is not an active machine user with a key");
    }
    form.client_id = sub;
  }
  return true;
}
