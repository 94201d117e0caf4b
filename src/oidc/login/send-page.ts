import type { ServerResponse } from "node:http";
import type { NodeResponse } from "../../http/respond.js";
import { page } from "./render.js";
import { TEXTS, type Language } from "./texts/index.js";

/** HTML that no other site may frame, no cache keeps, and that runs nothing. */
export function sendPage(res: NodeResponse, status: number, lang: Language, content: (t: (typeof TEXTS)[Language]) => [string, string]): void {
  const [title, body] = content(TEXTS[lang]);
  const html = page(lang, title, body);
  (res as ServerResponse).writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(html),
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
  });
  res.end(html);
}
