import { Code } from "@connectrpc/connect";
import { notFound, resourceExhausted } from "../domain/errors.js";
import { BRANDING_ASSET_PREFIX, BRANDING_SETTINGS, parseBrandingAssetPath } from "../domain/settings/branding.js";
import { settingsFile } from "../domain/settings/files.js";
import { HTTP_STATUS } from "../gateway/rpc-status.js";
import { sendImmutable } from "../http/immutable.js";
import { requestSignal } from "../http/request-signal.js";
import { sendStatus, type NodeRequest, type NodeResponse } from "../http/respond.js";
import { toConnectError } from "../rpc/errors.js";
import type { Store } from "../store/database.js";
import type { TenantResolver } from "./tenant-resolver.js";

/**
 * An SVG opened by itself (not as an <img>) is a document: it may load nothing and run
 * nothing, whatever sanitizing missed; its own <style> elements may apply.
 */
const SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'";

/**
 * The branding images, public, from the service's own origin: `/assets/v3alpha/branding/
 * <context>/<image>/<hash>` (domain/settings/branding.ts) of the instance the Host selects.
 * Returns false for other paths. Errors are google.rpc.Status bodies as the REST gateway's.
 */
export function brandingAssets({ store, tenants }: { store: Pick<Store, "forRequest">; tenants: TenantResolver }) {
  return async function serve(req: NodeRequest, res: NodeResponse, host: string): Promise<boolean> {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    if (!path.startsWith(BRANDING_ASSET_PREFIX)) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      sendStatus(res, 405, Code.Unimplemented, `${req.method} is not allowed on ${path}`);
      return true;
    }
    const signal = requestSignal(res);
    try {
      const instance = await tenants.resolve(new URL(`http://${host}`).hostname.toLowerCase(), signal, req.socket.remoteAddress);
      if (!instance) throw notFound(`no instance serves the host "${host}"`);
      if (instance.blocked) throw resourceExhausted("instance is blocked");
      const asset = parseBrandingAssetPath(path, instance.id);
      const file = asset && (await settingsFile(store.forRequest(signal).db, BRANDING_SETTINGS.name, asset.at, asset.image, asset.hash));
      if (!file) throw notFound(`no image at ${path}`);
      sendImmutable(
        req,
        res,
        { contentType: file.contentType, etag: `"${file.hash}"`, body: file.data },
        file.contentType === "image/svg+xml" ? { "content-security-policy": SVG_POLICY } : {},
      );
    } catch (thrown) {
      const { error, unexpected } = toConnectError(thrown);
      if (unexpected) throw thrown;
      const retryAfter = error.metadata.get("retry-after");
      if (retryAfter) res.setHeader("retry-after", retryAfter);
      sendStatus(res, HTTP_STATUS[error.code], error.code, error.rawMessage);
    }
    return true;
  };
}
