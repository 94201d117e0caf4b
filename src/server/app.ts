import { WindowLimiter } from "../http/window-limiter.js";
import { verificationSettings } from "./verification-settings.js";
import { createRegistry, type DescMethodUnary } from "@bufbuild/protobuf";
import { Code, createConnectRouter, createContextValues } from "@connectrpc/connect";
import { createAsyncIterable, validateUniversalHandlerOptions, type UniversalHandler } from "@connectrpc/connect/protocol";
import { compressionBrotli, compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import { file_buf_validate_validate } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import { TtlCache } from "../cache/ttl-cache.js";
import { UnknownLookups } from "../cache/unknown-lookups.js";
import { clientAddressKey } from "../rpc/context.js";
import type { Config } from "../config/config.js";
import type { SecretBox } from "../crypto/encryption.js";
import type { AccessEpoch } from "../cache/access-epoch.js";
import { createPasswordHasher } from "../crypto/passwords.js";
import { FeatureFlags } from "../domain/feature/flags.js";
import { loginSettingsKind } from "../domain/settings/login.js";
import { createRestGateway } from "../gateway/gateway.js";
import { openApiDocument } from "../gateway/openapi.js";
import { routesOf } from "../gateway/routes.js";
import { callerLeft, send, sendStatus, type NodeRequest, type NodeResponse } from "../http/respond.js";
import type { Logger } from "../log/logger.js";
import { interceptorChain } from "../rpc/interceptors/index.js";
import { unaryFrontEnds } from "../rpc/unary/front-ends.js";
import { UnaryMethods } from "../rpc/unary/methods.js";
import { checkBinaryBody } from "../rpc/binary-input.js";
import { assertDeclared } from "../rpc/method-rules.js";
import { watchStreams as watchStreamCounter } from "../rpc/services/health.js";
import { WatchSlots } from "../rpc/services/events/watch.js";
import { PLATFORM_SERVICES, registerServices, SERVED_SERVICES } from "../rpc/services/index.js";
import type { Store } from "../store/database.js";
import type { Telemetry } from "../telemetry/index.js";
import { issuerScheme, oidcMount } from "../oidc/provider/mount.js";
import { upstreamCalls } from "../upstream-idps/clients.js";
import { AccessTokenPrincipals } from "../oidc/helpers/principals.js";
import { Providers } from "../oidc/provider/providers.js";
import { OidcLookups } from "../oidc/helpers/lookups.js";
import { SigningKeys } from "../oidc/models/signing-keys.js";
import { ActionFunctions } from "../engines/actions/functions.js";
import { ExecutionPlans } from "../engines/actions/plans.js";
import { OutboundClient } from "../http/outbound.js";
import { DnsLookups } from "../dns/lookups.js";
import { ProviderSender } from "../engines/notifications/providers/sender.js";
import { createCors } from "./cors.js";
import { TenantResolver } from "./tenant-resolver.js";
import { brandingAssets } from "./branding-assets.js";
import { consoleFiles } from "./console-files.js";
import { hostAliases, requestAuthority } from "./host.js";
import { SignInLog } from "../domain/audit/sign-in-log.js";
import { insertSignIns } from "../store/sign-in-log.js";

export interface AppDeps {
  config: Config;
  store: Store;
  logger: Logger;
  box: SecretBox;
  /** Changes of access, this process's and (by NOTIFY) the others'. */
  access: AccessEpoch;
  /** Metrics and traces of every call; absent in tests that build an app alone. */
  telemetry?: Pick<Telemetry, "interceptors">;
}

/** Writes of action functions (metadata) outlive no caller; the statement timeout bounds them. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * Dispatch on the one port: CORS, then Connect procedures (gRPC, gRPC-web, Connect),
 * then plain HTTP endpoints, then OpenID Connect, then the branding images, then the REST
 * gateway; anything else is 404.
 */
export function createApp({ config, store, logger, box, access, telemetry }: AppDeps) {
  assertDeclared(SERVED_SERVICES);
  const flags = new FeatureFlags(store.db, config.features, access);
  // Host names and tokens nobody knows: cached misses and one budget per address for both.
  const unknown = {
    lookups: new UnknownLookups(config.unknownLookups.perIpPerMinute),
    misses: { ttlMs: config.unknownLookups.cacheTtlMs, maxEntries: config.unknownLookups.cacheSize },
  };
  const tenants = new TenantResolver(store, hostAliases(config.externalUrl.hostname), access, unknown.lookups, unknown.misses);
  const signingKeys = new SigningKeys(store, box, config.oidc, config.oidc.providerCacheSize);
  const accessTokens = new AccessTokenPrincipals(signingKeys);
  const lookups = new OidcLookups(access);
  const hasher = createPasswordHasher(config.passwords);
  // The one client for calls to other servers: action targets, upstream identity providers, SMS and http notification providers.
  const outbound = new OutboundClient({ allowPrivate: config.outbound.allowPrivate, maxResponseBytes: config.outbound.maxResponseBytes });
  const { dnsServers, dnsTimeoutMs, httpsPort, httpPort, tokenTtlMs } = config.domainValidation;
  const domainValidation = {
    clients: {
      outbound,
      outboundTimeoutMs: config.outbound.timeoutMs,
      dns: new DnsLookups({ servers: dnsServers, timeoutMs: dnsTimeoutMs }),
      ports: { https: httpsPort, http: httpPort },
    },
    tokenTtlMs,
  };
  const notifications = new ProviderSender({
    db: store.db,
    box,
    access,
    outbound,
    settings: config.notificationProviders,
    allowPrivate: config.outbound.allowPrivate,
    outboundTimeoutMs: config.outbound.timeoutMs,
  });
  const verification = verificationSettings(config, box);
  const plans = new ExecutionPlans(access, box, config.actions.signingKeyGraceMs);
  const executions = { store, plans, outbound, flags, logger };
  const functions = new ActionFunctions({ plans, outbound, flags, logger, transact: (fn) => store.forRequest(NEVER_ABORTED).transact(fn) });
  // Sign-in events of the login pages, the session API and the token endpoint, written behind their requests.
  const signIns = new SignInLog({ settings: config.signInLog, write: (rows) => insertSignIns(store.db, rows), logger });
  const providers = new Providers(
    signingKeys,
    { settings: config.oidc, db: store.db, box, access, lookups, flags, functions, loginSettings: loginSettingsKind(config.login), signIns },
    config.oidc.providerCacheSize,
  );
  // One budget of password and code tries per user for the login pages and the session API.
  const perUser = new WindowLimiter(config.login.perLoginNamePerMinute, 60_000);
  const sessions = {
    hasher,
    codes: verification,
    loginSettings: loginSettingsKind(config.login),
    limits: { perUser, perSession: new WindowLimiter(config.login.perSessionPerMinute, 60_000) },
    signIns,
  };
  // Upstream identity providers: the login pages' external login and the API's intents.
  const calls = upstreamCalls(outbound, config.outbound.timeoutMs, config.externalLogin);
  const oidc = oidcMount({
    config,
    store,
    logger,
    tenants,
    providers,
    keys: signingKeys,
    access,
    box,
    hasher,
    lookups,
    calls,
    functions,
    codes: verification,
    perUser,
    signIns,
  });
  const routerOptions = {
    interceptors: [...(telemetry?.interceptors() ?? []), ...interceptorChain({ store, logger, flags, tenants, access, accessTokens, executions, unknown })],
    readMaxBytes: config.maxBodyBytes,
    // A misspelt JSON field must be an error, not a silently ignored input.
    jsonOptions: { ignoreUnknownFields: false },
    acceptCompression: [compressionGzip, compressionBrotli],
  };
  const router = createConnectRouter(routerOptions);
  const unary = new UnaryMethods(routerOptions.interceptors);
  const serveUnary = unaryFrontEnds(validateUniversalHandlerOptions(routerOptions));
  // Probes and health watchers may poll hard; the database sees one check a second.
  const probe = new TtlCache<"database", boolean>(1_000, 1);
  const isServing = () => probe.getOrLoad("database", () => store.isReachable(config.healthTimeoutMs));
  const shutdown = new AbortController();
  const watchStreams = watchStreamCounter(config.maxWatchStreams);
  const eventWatch = { ...config.eventWatch, slots: new WatchSlots(config.eventWatch.perInstance) };
  registerServices(unary.recording(router), {
    store,
    box,
    access,
    flags,
    signingKeys,
    hasher,
    isServing,
    shutdown: shutdown.signal,
    watchStreams,
    eventWatch,
    loginSettings: loginSettingsKind(config.login),
    notifications,
    verification,
    domainValidation,
    sessions,
    idpIntents: { calls, scheme: issuerScheme(config), ttlMs: config.externalLogin.intentTtlMs },
    branding: config.branding,
  });
  const handlers = new Map<string, UniversalHandler>(router.handlers.map((h) => [h.requestPath, h]));

  const routes = routesOf(PLATFORM_SERVICES);
  const registry = createRegistry(file_buf_validate_validate);
  // The gateway's calls carry a mark of their own, so that logs and metrics can say "rest".
  const gateway = createRestGateway({ routes, methods: unary, registry, maxBodyBytes: config.maxBodyBytes, jsonOptions: routerOptions.jsonOptions, logger });
  // Made at its first request: most processes are never asked for it, and it costs a start ~0.2 s of CPU.
  let openapi: string | undefined;
  const openapiJson = () =>
    (openapi ??= JSON.stringify(openApiDocument(routes, { title: "Platform identity service", version: "3.0-alpha", serverUrl: config.externalUrl.origin })));
  const applyCors = createCors(config.corsOrigins);
  const assets = brandingAssets({ store, tenants });
  const consoleApp = consoleFiles({ store, tenants, scheme: issuerScheme(config) });

  const fail = (res: NodeResponse, error: unknown) => {
    if (callerLeft(res)) {
      logger.info({ err: error }, "the caller went away before the answer was written");
      return;
    }
    logger.error({ err: error }, "request failed outside the RPC chain");
    if (!res.headersSent) sendStatus(res, 500, Code.Internal, "internal error");
    else res.destroy();
  };

  function dispatch(req: NodeRequest, res: NodeResponse): void {
    if (applyCors(req, res)) return;
    const path = (req.url ?? "/").split("?", 1)[0]!;
    // The host selects the instance; HTTP/1.0 may omit it and anyone may garble it.
    const authority = requestAuthority(req);
    if ("error" in authority) {
      sendStatus(res, 400, Code.InvalidArgument, authority.error);
      return;
    }
    const host = authority.host;
    const procedure = handlers.get(path);
    if (procedure) {
      const contextValues = createContextValues().set(clientAddressKey, req.socket.remoteAddress);
      const viaConnect = (read?: Uint8Array) => {
        const uReq = universalRequestFromNodeRequest(req, res, undefined, contextValues);
        const body = checkBinaryBody(
          read ? createAsyncIterable([read]) : (uReq.body as AsyncIterable<Uint8Array>),
          uReq.header,
          procedure.method.input,
          config.maxBodyBytes,
        );
        procedure({ ...uReq, body })
          .then((uRes) => universalResponseToNodeResponse(uRes, res))
          .catch((error) => fail(res, error));
      };
      const invoke = unary.get(path);
      const served = invoke && serveUnary(req, res, invoke, procedure.method as DescMethodUnary, contextValues, viaConnect);
      if (served) served.catch((error) => fail(res, error));
      else viaConnect();
      return;
    }
    if (req.method === "GET" || req.method === "HEAD") {
      if (path === "/healthz") return send(res, 200, "text/plain; charset=utf-8", "ok\n");
      if (path === "/ready") {
        isServing().then(
          (ok) => send(res, ok ? 200 : 503, "text/plain; charset=utf-8", ok ? "ready\n" : "database unreachable\n"),
          (error) => fail(res, error),
        );
        return;
      }
      if (path === "/openapi.json") return send(res, 200, "application/json", openapiJson());
    }
    oidc(req, res, host)
      .then((handled) => handled || assets(req, res, host))
      .then((handled) => handled || consoleApp(req, res, host))
      .then((handled) => handled || gateway(req, res, host))
      .then(
        (handled) => {
          if (!handled) sendStatus(res, 404, Code.NotFound, `no endpoint at ${req.method} ${path}`);
        },
        (error) => fail(res, error),
      );
  }

  function handle(req: NodeRequest, res: NodeResponse): void {
    try {
      dispatch(req, res);
    } catch (error) {
      fail(res, error);
    }
  }

  return { handle, flags, watchStreams, outbound, notifications, signIns, shutdown: () => shutdown.abort() };
}
