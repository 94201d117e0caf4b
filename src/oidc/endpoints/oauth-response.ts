import type { ServerResponse } from "node:http";
import type { NodeRequest, NodeResponse } from "../../http/respond.js";

/** An error of an OAuth 2.0 endpoint: its status, RFC 6749 error code and description. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly headers?: Record<string, string>,
  ) {
    super(description);
  }
}

/** Token material is never cached (RFC 6749 section 5.1). */
export function sendJson(res: NodeResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  // Both response types write heads alike; their declared overloads just do not unify.
  (res as ServerResponse).writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    pragma: "no-cache",
    ...headers,
  });
  res.end(text);
}

export function sendOAuthError(res: NodeResponse, error: OAuthError): void {
  sendJson(res, error.status, { error: error.error, error_description: error.description }, error.headers);
}

/**
 * Reads a form body up to `limit` bytes; a larger or unreadable one is an OAuthError. A
 * parameter may appear once, except those in `repeatable`, whose values are joined by spaces
 * (RFC 8693 repeats `audience` and `resource`, whose values are URIs or names without spaces).
 */
export async function readForm(req: NodeRequest, limit: number, repeatable: ReadonlySet<string> = new Set()): Promise<Record<string, string>> {
  const type = String(req.headers["content-type"] ?? "")
    .split(";")[0]!
    .trim()
    .toLowerCase();
  if (req.method !== "POST") throw new OAuthError(405, "invalid_request", "use POST");
  if (type !== "application/x-www-form-urlencoded") throw new OAuthError(400, "invalid_request", "only application/x-www-form-urlencoded bodies are supported");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new OAuthError(413, "invalid_request", `the request body exceeds ${limit} bytes`);
    chunks.push(chunk);
  }
  const params = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
  const form: Record<string, string> = {};
  for (const [key, value] of params) {
    if (key in form && !repeatable.has(key)) throw new OAuthError(400, "invalid_request", `'${key}' parameter must only be provided once`);
    form[key] = key in form ? `${form[key]} ${value}` : value;
  }
  return form;
}
