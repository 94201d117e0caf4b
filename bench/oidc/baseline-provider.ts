/**
 * The OIDC benchmark's baseline: node-oidc-provider (the version the service pins) on its own,
 * with its default in-memory adapter, one static client for client_credentials and one for
 * introspection, a generated RS256 and ES256 key, and resource indicators that choose the
 * access token's format and signing algorithm. Started by bench/oidc/run.ts as a child; prints
 * `{"http1": <port>, "control": <port>}` as its first line of stdout.
 *
 * The control port (never under load) mints, through the provider's own models, an access
 * token of a grant with `openid profile` for the provider's userinfo endpoint, which does not
 * accept client_credentials tokens.
 */
import { generateKeyPairSync } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { errors, type Configuration } from "oidc-provider";
import { HOST } from "../settings.js";
import { BASELINE_ACCOUNT, BASELINE_API, BASELINE_CLIENT, BASELINE_ISSUER, BASELINE_RESOURCES, BASELINE_SCOPE } from "./shared.js";

/** The service's key types and sizes (src/domain/signing-key/commands.ts): RSA 2048, P-256. */
const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" });

/** The service's default access token lifetime (PLATFORM_OIDC_ACCESS_TOKEN_TTL, 1 h). */
const TTL_S = 3600;

const resourceServers = new Map<string, { format: "jwt" | "opaque"; alg?: "RS256" | "ES256" }>([
  [BASELINE_RESOURCES.opaque, { format: "opaque" }],
  [BASELINE_RESOURCES.jwtRs256, { format: "jwt", alg: "RS256" }],
  [BASELINE_RESOURCES.jwtEs256, { format: "jwt", alg: "ES256" }],
]);

const configuration: Configuration = {
  clients: [
    {
      client_id: BASELINE_CLIENT.id,
      client_secret: BASELINE_CLIENT.secret,
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: "client_secret_basic",
    },
    {
      client_id: BASELINE_API.id,
      client_secret: BASELINE_API.secret,
      grant_types: [],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  jwks: {
    keys: [
      { ...rsa, kid: "rs", alg: "RS256", use: "sig" },
      { ...ec, kid: "es", alg: "ES256", use: "sig" },
    ] as never,
  },
  enabledJWA: { idTokenSigningAlgValues: ["RS256", "ES256"] },
  scopes: ["openid", "profile", "read"],
  claims: { openid: ["sub"], profile: ["name", "preferred_username", "updated_at"] },
  async findAccount(_ctx, sub) {
    return { accountId: sub, claims: () => ({ sub, name: "Bench Machine", preferred_username: `${sub}@bench.example`, updated_at: 1_700_000_000 }) };
  },
  ttl: { AccessToken: TTL_S, ClientCredentials: TTL_S, Grant: TTL_S, IdToken: TTL_S, Session: TTL_S, Interaction: 3600, RefreshToken: TTL_S },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true, allowedPolicy: async () => true },
    userinfo: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => undefined as never,
      useGrantedResource: async () => false,
      async getResourceServerInfo(_ctx, indicator) {
        const server = resourceServers.get(indicator);
        if (!server) throw new errors.InvalidTarget();
        return {
          scope: BASELINE_SCOPE,
          audience: indicator,
          accessTokenTTL: TTL_S,
          accessTokenFormat: server.format,
          ...(server.alg && { jwt: { sign: { alg: server.alg } } }),
        };
      },
    },
  },
};

const provider = new Provider(BASELINE_ISSUER, configuration);
provider.on("server_error", (_ctx, error) => process.stderr.write(`server_error: ${String(error)}\n`));

/** A fresh userinfo token (the memory adapter is an LRU of 1,000 entries: a load of token requests evicts old ones). */
async function mintUserinfoToken(): Promise<string> {
  const client = await provider.Client.find(BASELINE_CLIENT.id);
  const grant = new provider.Grant({ accountId: BASELINE_ACCOUNT, clientId: BASELINE_CLIENT.id });
  grant.addOIDCScope("openid profile");
  const grantId = await grant.save();
  const token = new provider.AccessToken({
    accountId: BASELINE_ACCOUNT,
    client: client!,
    grantId,
    scope: "openid profile",
    gty: "client_credentials",
  } as never);
  return token.save();
}

const listen = (server: http.Server) => new Promise<number>((resolve) => server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port)));

const server = http.createServer(provider.callback());
server.keepAliveTimeout = 60_000;
const control = http.createServer((req, res) => {
  if (req.method !== "POST" || req.url !== "/userinfo-token") {
    res.writeHead(404).end();
    return;
  }
  mintUserinfoToken().then(
    (token) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ token })),
    (error: unknown) => res.writeHead(500).end(String(error)),
  );
});
const ports = { http1: await listen(server), control: await listen(control) };
process.stdout.write(`${JSON.stringify(ports)}\n`);

const stop = () => {
  server.closeAllConnections();
  control.closeAllConnections();
  server.close();
  control.close();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
