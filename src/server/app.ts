import { createRegistry } from "@bufbuild/protobuf";
import { createConnectRouter } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import { file_buf_validate_validate } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import type { Config } from "../config/config.js";
import type { SecretBox } from "../crypto/encryption.js";
import { FeatureFlags } from "../domain/feature/flags.js";
import { createRestGateway, sendStatus, type NodeRequest, type NodeResponse } from "../gateway/gateway.js";
import { openApiDocument } from "../gateway/openapi.js";
import { rpcStatus } from "../gateway/rpc-status.js";
import { routesOf } from "../gateway/routes.js";
import type { Logger } from "../log/logger.js";
import { interceptorChain } from "../rpc/interceptors/index.js";
import { assertDeclared } from "../rpc/method-rules.js";
import { PLATFORM_SERVICES, registerServices } from "../rpc/services/index.js";
import { isReachable, type Store } from "../store/database.js";
import { createCors } from "./cors.js";
import { Code } from "@connectrpc/connect";

export interface AppDeps {
  config: Config;
  store: Store;
  logger: Logger;
  box: SecretBox;
}

/**
 * Dispatch on the one port: CORS, then Connect procedures (gRPC, gRPC-web, Connect),
 * then plain HTTP endpoints, then the REST gateway; anything else is 404.
 */
export function createApp({ config, store, logger, box }: AppDeps) {
  assertDeclared(PLATFORM_SERVICES);
  const flags = new FeatureFlags(store.db, config.features);
  const router = createConnectRouter({
    interceptors: interceptorChain({ db: store.db, logger, flags }),
    readMaxBytes: config.maxBodyBytes,
    // A misspelt JSON field must be an error, not a silently ignored input.
    jsonOptions: { ignoreUnknownFields: false },
    acceptCompression: [compressionGzip, compressionBrotli],
  });
  const isServing = () => isReachable(store);
  registerServices(router, { db: store.db, box, isServing });
  const handlers = new Map<string, UniversalHandler>(router.handlers.map((h) => [h.requestPath, h]));

  const routes = routesOf(PLATFORM_SERVICES);
  const registry = createRegistry(file_buf_validate_validate);
  const gateway = createRestGateway({ routes, handlers, registry, maxBodyBytes: config.maxBodyBytes });
  const openapi = Buffer.from(
    JSON.stringify(openApiDocument(routes, { title: "Platform identity service", version: "3.0-alpha", serverUrl: config.externalUrl.origin })),
  );
  const applyCors = createCors(config.corsOrigins);

  const fail = (res: NodeResponse, error: unknown) => {
    logger.error({ err: error }, "request failed outside the RPC chain");
    if (!res.headersSent) sendStatus(res, 500, rpcStatus(Code.Internal, "internal error"));
    else res.destroy();
  };

  function handle(req: NodeRequest, res: NodeResponse): void {
    if (applyCors(req, res)) return;
    const path = (req.url ?? "/").split("?", 1)[0]!;
    if (!req.headers.host && !req.headers[":authority"]) {
      // HTTP/1.0 may omit it, but the host is what selects the instance.
      sendStatus(res, 400, rpcStatus(Code.InvalidArgument, "the Host header is required"));
      return;
    }
    const procedure = handlers.get(path);
    if (procedure) {
      procedure(universalRequestFromNodeRequest(req, res, undefined, undefined))
        .then((uRes) => universalResponseToNodeResponse(uRes, res))
        .catch((error) => fail(res, error));
      return;
    }
    if (req.method === "GET" || req.method === "HEAD") {
      if (path === "/healthz") return plain(res, 200, "ok\n");
      if (path === "/ready") {
        isServing().then(
          (ok) => plain(res, ok ? 200 : 503, ok ? "ready\n" : "database unreachable\n"),
          (error) => fail(res, error),
        );
        return;
      }
      if (path === "/openapi.json") {
        (res as import("node:http").ServerResponse).writeHead(200, { "content-type": "application/json", "content-length": openapi.length });
        res.end(openapi);
        return;
      }
    }
    gateway(req, res).then(
      (handled) => {
        if (!handled) sendStatus(res, 404, rpcStatus(Code.NotFound, `no endpoint at ${req.method} ${path}`));
      },
      (error) => fail(res, error),
    );
  }

  return { handle, flags };
}

function plain(res: NodeResponse, status: number, text: string): void {
  (res as import("node:http").ServerResponse).writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(text);
}
