import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { sendImmutable } from "../../../http/immutable.js";
import type { NodeRequest, NodeResponse } from "../../../http/respond.js";
import { LOGIN_PATH } from "../kit/paths.js";
import { WEBAUTHN_SCRIPT } from "./webauthn-script.js";

/**
 * The login pages' static files, from the service's own origin (their CSP allows scripts
 * from 'self' only): one script for passkeys and security keys, and one that submits the
 * form of external login's form_post callback again (flow.ts, resubmitPage). It is
 * @simplewebauthn/browser's UMD bundle as the package ships it (one dependency-free file
 * that defines `SimpleWebAuthnBrowser` when loaded as a classic script: the browser half of
 * the library whose server half checks the answers, keeping both ends in step on the JSON
 * forms and base64url conversions), followed by the pages' glue (webauthn-script.ts). Its
 * URL carries a hash of its content, so a browser may keep it for a year: a new version is a
 * new URL. The ETag answers a revalidation anyway.
 */

interface Asset {
  path: string;
  body: Buffer;
  etag: string;
  type: string;
}

/** The library's browser bundle, found beside the package's entry point (its exports map names no other file). */
function libraryBundle(): string {
  const entry = createRequire(import.meta.url).resolve("@simplewebauthn/browser");
  return readFileSync(join(dirname(entry), "..", "dist", "bundle", "index.umd.min.js"), "utf8");
}

function asset(name: string, extension: string, type: string, content: string): Asset {
  const body = Buffer.from(content, "utf8");
  const hash = createHash("sha256").update(body).digest("base64url").slice(0, 16);
  return { path: `${LOGIN_PATH}/assets/${name}.${hash}.${extension}`, body, etag: `"${hash}"`, type };
}

let webauthn: Asset | undefined;
/** Read once, on first use. */
function webauthnAsset(): Asset {
  webauthn ??= asset("webauthn", "js", "text/javascript; charset=utf-8", `${libraryBundle()}\n${WEBAUTHN_SCRIPT}`);
  return webauthn;
}

/** Submits the page's form marked data-auto-submit once: the resubmitted form_post callback. */
const AUTO_SUBMIT_SCRIPT = `document.querySelector("form[data-auto-submit]")?.submit();\n`;
let autoSubmit: Asset | undefined;
function autoSubmitAsset(): Asset {
  autoSubmit ??= asset("auto-submit", "js", "text/javascript; charset=utf-8", AUTO_SUBMIT_SCRIPT);
  return autoSubmit;
}

/** The `<script>` element of the auto-submit script: deferred, so the form is there when it runs. */
export function autoSubmitScriptTag(): string {
  return `<script src="${autoSubmitAsset().path}" defer></script>`;
}

/** The `<script>` element of the WebAuthn script: deferred, so it runs once the page is parsed. */
export function webauthnScriptTag(): string {
  return `<script src="${webauthnAsset().path}" defer></script>`;
}

/** Answers a request for one of the assets (true), or leaves it to the pages (false). */
export function serveLoginAsset(req: NodeRequest, res: NodeResponse): boolean {
  const path = (req.url ?? "/").split("?", 1)[0]!;
  if (!path.startsWith(`${LOGIN_PATH}/assets/`)) return false;
  const response = res as ServerResponse;
  const found = [webauthnAsset(), autoSubmitAsset()].find((a) => a.path === path);
  if (!found) {
    response.writeHead(404, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" }).end("not found");
    return true;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    response.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }).end("method not allowed");
    return true;
  }
  sendImmutable(req, res, { contentType: found.type, etag: found.etag, body: found.body }, { "cross-origin-resource-policy": "same-origin" });
  return true;
}
