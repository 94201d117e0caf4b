import type Provider from "oidc-provider";
import type { KoaContextWithOIDC } from "oidc-provider";
import { OIDC_ROUTES } from "../provider/routes.js";

const RESPONSE_MODES = new Set(["query", "fragment", "form_post"]);

type Ctx = KoaContextWithOIDC;

/**
 * The spec's rules for authorization requests where OpenID Connect leaves room and the
 * provider chose otherwise, applied around it (configuration.ts): before, an invalid
 * `response_mode` is ignored, `offline_access` yields a refresh token without
 * `prompt=consent` (the service consents for its own applications anyway, login/steps/pages.ts),
 * and `openid` is required; after, a response type the client lacks is
 * `unauthorized_client` (RFC 6749 section 4.1.2.1), not `invalid_request`.
 */
export async function beforeAuthorization(ctx: Ctx, provider: Provider): Promise<boolean> {
  if (ctx.path !== OIDC_ROUTES.authorization || ctx.method !== "GET") return false;
  const url = new URL(ctx.url, "http://host");
  const params = url.searchParams;
  if (params.getAll("response_mode").length === 1 && !RESPONSE_MODES.has(params.get("response_mode")!)) params.delete("response_mode");
  const scopes = (params.get("scope") ?? "").split(" ");
  const prompts = (params.get("prompt") ?? "").split(" ").filter(Boolean);
  if (
    params.getAll("scope").length === 1 &&
    params.getAll("prompt").length <= 1 &&
    scopes.includes("offline_access") &&
    !prompts.includes("none") &&
    !prompts.includes("consent")
  ) {
    params.set("prompt", [...prompts, "consent"].join(" "));
  }
  ctx.url = `${url.pathname}${url.search}`;
  return refuseWithoutOpenid(ctx, provider, params);
}

/**
 * A request without `openid` goes back to a registered redirect URI with invalid_scope;
 * anything the provider would refuse anyway (unknown client, unregistered URI, other
 * response types, which it checks itself) is left to it.
 */
async function refuseWithoutOpenid(ctx: Ctx, provider: Provider, params: URLSearchParams): Promise<boolean> {
  const single = (name: string) => (params.getAll(name).length === 1 ? params.get(name)! : undefined);
  const scope = single("scope");
  const clientId = single("client_id");
  const redirectUri = single("redirect_uri");
  if (params.getAll("scope").length > 1 || (scope ?? "").split(" ").includes("openid") || single("response_type") !== "code" || !clientId || !redirectUri)
    return false;
  const client = await provider.Client.find(clientId).catch(() => undefined);
  if (!client || !client.redirectUriAllowed(redirectUri)) return false;
  const target = new URL(redirectUri);
  const answer = new URLSearchParams({ error: "invalid_scope", error_description: "the openid scope is required", iss: provider.issuer });
  const state = single("state");
  if (state !== undefined) answer.set("state", state);
  if (single("response_mode") === "fragment") target.hash = answer.toString();
  else answer.forEach((value, key) => target.searchParams.set(key, value));
  ctx.status = 303;
  ctx.redirect(target.href);
  return true;
}

const NOT_ALLOWED = "requested response_type is not allowed for this client";

export function afterAuthorization(ctx: Ctx): void {
  const location = ctx.response.get("location");
  if (ctx.status !== 303 || !location || !location.includes("error=invalid_request")) return;
  const url = new URL(location);
  for (const params of [url.searchParams, new URLSearchParams(url.hash.slice(1))]) {
    if (params.get("error") === "invalid_request" && params.get("error_description") === NOT_ALLOWED) {
      params.set("error", "unauthorized_client");
      if (params === url.searchParams) ctx.redirect(url.href);
      else {
        url.hash = params.toString();
        ctx.redirect(url.href);
      }
      ctx.status = 303;
      return;
    }
  }
}
