import { cors } from "@connectrpc/connect";
import type { NodeRequest, NodeResponse } from "../http/respond.js";

const ALLOW_METHODS = [...new Set([...cors.allowedMethods, "GET", "POST", "PUT", "PATCH", "DELETE"])].join(", ");
const ALLOW_HEADERS = [...cors.allowedHeaders, "Authorization", "X-Request-Id"].join(", ");
const EXPOSE_HEADERS = [...cors.exposedHeaders, "X-Request-Id"].join(", ");

/**
 * CORS for browser clients (gRPC-web, Connect, REST). Credentials are bearer tokens in
 * headers, never cookies, so allowing any origin by default exposes nothing ambient.
 * Returns true when it answered the request itself (a preflight).
 */
export function createCors(allowedOrigins: string[]) {
  const any = allowedOrigins.includes("*");
  const allowed = new Set(allowedOrigins);
  return function applyCors(req: NodeRequest, res: NodeResponse): boolean {
    const origin = req.headers.origin;
    if (typeof origin !== "string") return false;
    if (!any && !allowed.has(origin)) {
      if (req.method === "OPTIONS") {
        res.statusCode = 403;
        res.end();
        return true;
      }
      return false;
    }
    res.setHeader("access-control-allow-origin", any ? "*" : origin);
    if (!any) res.setHeader("vary", "Origin");
    res.setHeader("access-control-expose-headers", EXPOSE_HEADERS);
    if (req.method !== "OPTIONS" || !req.headers["access-control-request-method"]) return false;
    res.setHeader("access-control-allow-methods", ALLOW_METHODS);
    res.setHeader("access-control-allow-headers", ALLOW_HEADERS);
    res.setHeader("access-control-max-age", "7200");
    res.statusCode = 204;
    res.end();
    return true;
  };
}
