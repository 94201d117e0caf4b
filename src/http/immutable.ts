import type { ServerResponse } from "node:http";
import type { NodeRequest, NodeResponse } from "./respond.js";

/** A file whose URL names a hash of its content: a new content is a new URL. */
export interface ImmutableFile {
  contentType: string;
  /** A quoted entity tag, `"<hash>"`. */
  etag: string;
  body: Uint8Array;
}

/**
 * Answers such a file: anyone may keep it for a year without asking again (immutable), and
 * a revalidation whose If-None-Match names its tag is 304 without the body. HEAD gets the
 * headers only. `headers` adds to them (a Content-Security-Policy, …).
 */
export function sendImmutable(req: NodeRequest, res: NodeResponse, file: ImmutableFile, headers: Record<string, string> = {}): void {
  const response = res as ServerResponse;
  const common = { "cache-control": "public, max-age=31536000, immutable", etag: file.etag, "x-content-type-options": "nosniff", ...headers };
  const tags = String(req.headers["if-none-match"] ?? "")
    .split(",")
    .map((t) => t.trim().replace(/^W\//, ""));
  if (tags.includes(file.etag) || tags.includes("*")) {
    response.writeHead(304, common).end();
    return;
  }
  response.writeHead(200, { ...common, "content-type": file.contentType, "content-length": file.body.length });
  response.end(req.method === "HEAD" ? undefined : file.body);
}
