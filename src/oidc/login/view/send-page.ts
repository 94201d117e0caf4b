import type { ServerResponse } from "node:http";
import type { NodeResponse } from "../../../http/respond.js";
import type { Frame } from "./look.js";
import { page } from "./render.js";
import { TEXTS, type Texts } from "./texts/index.js";

/**
 * The headers of every login page (the provider's own pages too): HTML that no other site
 * may frame, no cache keeps, and that runs no script but the service's own (the WebAuthn
 * script of assets.ts: no inline script, so an injected one cannot run); images only from the
 * service itself (the branding's logo and icon) or inline (`data:`), styles only inline (the
 * one stylesheet of render.ts), nothing else from anywhere.
 */
export const PAGE_HEADERS = {
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
};

export function sendPage(res: NodeResponse, status: number, frame: Frame, content: (t: Texts) => [string, string]): void {
  const [title, body] = content(TEXTS[frame.lang]);
  const html = page(frame, title, body);
  (res as ServerResponse).writeHead(status, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(html), ...PAGE_HEADERS });
  res.end(html);
}
