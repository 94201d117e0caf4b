import type { NodeRequest } from "../http/respond.js";

/** RFC 3986 host and port, nothing else: no userinfo, path, query or white space. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/;

/**
 * The authority a request names, which selects its instance, or why it cannot be trusted.
 * HTTP/2 names it in `:authority`; a `host` header beside it must agree. HTTP/1.1 must send
 * exactly one Host header. Anything else would let one request be routed by one value and
 * read by another.
 */
export function requestAuthority(req: NodeRequest): { host: string } | { error: string } {
  const headers = req.headers;
  let host: string | undefined;
  if (req.httpVersionMajor >= 2) {
    const authority = headers[":authority"];
    const hostHeader = headers.host;
    if (typeof authority === "string" && typeof hostHeader === "string" && authority.toLowerCase() !== hostHeader.toLowerCase()) {
      return { error: "the host header differs from :authority" };
    }
    host = typeof authority === "string" ? authority : hostHeader;
  } else {
    let count = 0;
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === "host") count++;
    if (count > 1) return { error: "more than one Host header" };
    host = headers.host;
  }
  if (typeof host !== "string" || host === "") return { error: "a Host header is required" };
  const match = HOST.exec(host);
  if (!match || Number(match[1] ?? 0) > 65535) return { error: "the Host header must be a host name and an optional port" };
  return { host };
}

/**
 * Names that reach the same machine as `localhost`: in the zero-setup start, whose instance
 * is `localhost`, `curl 127.0.0.1:8080` must find it too. Other external hosts get no aliases.
 * An instance created for one of these names itself still wins (rpc/interceptors/tenant.ts).
 */
export function hostAliases(externalHost: string): ReadonlyMap<string, string> {
  if (externalHost !== "localhost") return new Map();
  return new Map([
    ["127.0.0.1", "localhost"],
    ["[::1]", "localhost"],
    ["::1", "localhost"],
  ]);
}
