import { invalidArgument } from "../errors.js";
import type { OidcConfig } from "./model.js";

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);
/** Schemes that run or read something in the browser instead of reaching an application. */
const SCRIPTING_SCHEMES = new Set(["javascript:", "data:", "vbscript:", "file:", "blob:"]);

/**
 * A redirect (or post-logout redirect) URI as OAuth 2.0 for native apps (RFC 8252) and
 * OpenID Connect allow it: absolute, without fragment, https; http only in development mode
 * or to a native app's loopback interface; another scheme only for native apps (their
 * private-use URI scheme, `com.example.app:/callback`).
 */
function checkRedirectUri(field: string, uri: string, config: Pick<OidcConfig, "appType" | "devMode">, onIssuer: boolean): void {
  // A path on the issuer's origin: only the service's own console (instance/console-app.ts).
  if (onIssuer && /^\/(?![/\\])\S*$/.test(uri) && !uri.includes("#")) return;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw invalidArgument(`${field}: "${uri}" is not an absolute URI`);
  }
  if (/\s/.test(uri)) throw invalidArgument(`${field}: "${uri}" contains whitespace`);
  if (uri.includes("#")) throw invalidArgument(`${field}: "${uri}" has a fragment, which redirect URIs must not have`);
  if (SCRIPTING_SCHEMES.has(url.protocol))
    throw invalidArgument(`${field}: "${uri}" uses the scheme ${url.protocol.slice(0, -1)}, which no client may redirect to`);
  // The URL parser repairs "https:host/cb" and "https:///cb"; a redirect URI must be written out whole.
  if ((url.protocol === "https:" || url.protocol === "http:") && !/^https?:\/\/[^/]/i.test(uri)) {
    throw invalidArgument(`${field}: "${uri}" is not a complete ${url.protocol.slice(0, -1)} URI (scheme://host/path)`);
  }
  if (url.protocol === "https:") return;
  if (url.protocol === "http:") {
    if (config.devMode || (config.appType === "native" && LOOPBACK.has(url.hostname))) return;
    throw invalidArgument(`${field}: "${uri}" must use https (http is allowed in dev_mode, and for a native app's loopback address)`);
  }
  if (config.appType === "native") return;
  throw invalidArgument(`${field}: "${uri}" uses the scheme ${url.protocol.slice(0, -1)}, which only native apps may use`);
}

function checkOrigin(origin: string): void {
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  if (!url || url.origin === "null" || url.origin !== origin) {
    throw invalidArgument(`additional_origins: "${origin}" is not an origin (scheme://host[:port])`);
  }
}

/** Which response types each grant type needs, and the other way round. */
const PAIRS: { response: readonly OidcConfig["responseTypes"][number][]; grant: OidcConfig["grantTypes"][number]; names: [string, string] }[] = [
  { response: ["code"], grant: "authorization_code", names: ["CODE", "AUTHORIZATION_CODE"] },
  { response: ["id_token", "id_token token"], grant: "implicit", names: ["ID_TOKEN or ID_TOKEN_TOKEN", "IMPLICIT"] },
];

/**
 * Refuses a configuration no client could use as declared (InvalidArgument naming both
 * sides). `onIssuer`: redirect URIs may be paths, resolved against each issuer (the console's).
 */
export function checkOidcConfig(config: OidcConfig, onIssuer = false): void {
  config.redirectUris.forEach((uri) => checkRedirectUri("redirect_uris", uri, config, onIssuer));
  config.postLogoutRedirectUris.forEach((uri) => checkRedirectUri("post_logout_redirect_uris", uri, config, onIssuer));
  config.additionalOrigins.forEach(checkOrigin);
  if (config.responseTypes.length === 0) throw invalidArgument("response_types: at least one response type is required");
  const hasResponse = (pair: (typeof PAIRS)[number]) => config.responseTypes.some((r) => pair.response.includes(r));
  for (const pair of PAIRS) {
    if (hasResponse(pair) && !config.grantTypes.includes(pair.grant))
      throw invalidArgument(`response type ${pair.names[0]} needs grant type ${pair.names[1]} in grant_types`);
  }
  for (const pair of PAIRS) {
    if (config.grantTypes.includes(pair.grant) && !hasResponse(pair))
      throw invalidArgument(`grant type ${pair.names[1]} needs response type ${pair.names[0]} in response_types`);
  }
  if (config.grantTypes.includes("refresh_token") && !config.grantTypes.includes("authorization_code")) {
    throw invalidArgument("grant type REFRESH_TOKEN needs grant type AUTHORIZATION_CODE in grant_types");
  }
}
