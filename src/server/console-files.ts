import { Code, ConnectError } from "@connectrpc/connect";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { basename, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { consoleClientOf } from "../domain/instance/queries.js";
import { notFound, resourceExhausted } from "../domain/errors.js";
import { HTTP_STATUS } from "../gateway/rpc-status.js";
import { sendImmutable, type ImmutableFile } from "../http/immutable.js";
import { requestSignal } from "../http/request-signal.js";
import { sendStatus, type NodeRequest, type NodeResponse } from "../http/respond.js";
import { toConnectError } from "../rpc/errors.js";
import type { Store } from "../store/database.js";
import type { TenantResolver } from "./tenant-resolver.js";

/**
 * The administration console (console/, built by Vite into dist/console), served at
 * /ui/console/ on every instance's domains:
 * - `assets/<name>-<hash>.<ext>`: kept for a year (their names change with their content);
 * - `config.json`: the console application of the instance the Host selects, never cached;
 * - any other path: index.html (the console routes in the browser), never cached.
 * Every answer carries the console's CSP: its own scripts and styles only, no inline ones,
 * API calls to its own origin only, in no frame.
 */
const CONSOLE_PATH = "/ui/console";

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const HEADERS = { "content-security-policy": CONSOLE_CSP, "x-frame-options": "DENY", "x-content-type-options": "nosniff", "referrer-policy": "same-origin" };

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

interface Built {
  index: Buffer;
  assets: Map<string, ImmutableFile>;
}

/**
 * Where the build is: beside the compiled service (dist/src/server → dist/console), or under
 * dist/ when the service runs from its sources (tests), whose ../../console is the console's
 * source folder, not a build.
 */
function builtDir(): string | undefined {
  const root = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..");
  const dir = basename(root) === "dist" ? join(root, "console") : join(root, "dist", "console");
  return existsSync(join(dir, "index.html")) ? dir : undefined;
}

function load(dir: string): Built {
  const assets = new Map<string, ImmutableFile>();
  const assetDir = join(dir, "assets");
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    const body = readFileSync(join(assetDir, name));
    assets.set(name, {
      contentType: TYPES[extname(name)] ?? "application/octet-stream",
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 16)}"`,
      body,
    });
  }
  return { index: readFileSync(join(dir, "index.html")), assets };
}

/** `scheme`: the issuers' (oidc/provider/mount.ts issuerScheme): the console signs in at the issuer of the host it was loaded from. */
export function consoleFiles({
  store,
  tenants,
  scheme,
  dir = builtDir(),
}: {
  store: Pick<Store, "forRequest">;
  tenants: TenantResolver;
  scheme: string;
  dir?: string | undefined;
}) {
  // Read once: a build replaces the files, a restart serves them (npm start builds before it starts).
  const built = dir ? load(dir) : undefined;

  return async function serve(req: NodeRequest, res: NodeResponse, host: string): Promise<boolean> {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    if (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`)) return false;
    const response = res as ServerResponse;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      sendStatus(res, 405, Code.Unimplemented, `${req.method} is not allowed on ${path}`);
      return true;
    }
    if (path === CONSOLE_PATH) {
      response.writeHead(308, { location: `${CONSOLE_PATH}/`, "cache-control": "no-store" }).end();
      return true;
    }
    try {
      if (!built) throw new ConnectError("the console is not built: npm start builds it (npm ci installs its build tools)", Code.Unavailable);
      const rest = path.slice(CONSOLE_PATH.length + 1);
      if (rest.startsWith("assets/")) {
        const file = built.assets.get(rest.slice("assets/".length));
        if (!file) throw notFound(`no console file at ${path}`);
        sendImmutable(req, res, file, HEADERS);
        return true;
      }
      if (rest === "config.json") {
        const signal = requestSignal(res);
        const instance = await tenants.resolve(new URL(`http://${host}`).hostname.toLowerCase(), signal, req.socket.remoteAddress);
        if (!instance) throw notFound(`no instance serves the host "${host}"`);
        if (instance.blocked) throw resourceExhausted("instance is blocked");
        const clientId = await consoleClientOf(store.forRequest(signal).db, instance.id);
        if (!clientId) throw new ConnectError("this instance has no console application yet: it is provisioned at start", Code.Unavailable);
        const body = JSON.stringify({ issuer: `${scheme}://${host.toLowerCase()}`, clientId });
        response.writeHead(200, { ...HEADERS, "content-type": "application/json", "cache-control": "no-store", "content-length": Buffer.byteLength(body) });
        response.end(req.method === "HEAD" ? undefined : body);
        return true;
      }
      response.writeHead(200, { ...HEADERS, "content-type": "text/html; charset=utf-8", "cache-control": "no-cache", "content-length": built.index.length });
      response.end(req.method === "HEAD" ? undefined : built.index);
    } catch (thrown) {
      const { error, unexpected } = toConnectError(thrown);
      if (unexpected) throw thrown;
      sendStatus(res, HTTP_STATUS[error.code], error.code, error.rawMessage);
    }
    return true;
  };
}
