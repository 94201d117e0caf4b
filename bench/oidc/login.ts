import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import { requestJson, type Created } from "../http-json.js";
import type { ServiceUnderTest } from "../service.js";
import { HOST, REQUEST_TIMEOUT_MS, USER_PASSWORD } from "../settings.js";
import { basic, form, FORM } from "./http-form.js";

/** The concurrency for password logins (a person's sign-in, not a machine's token). */
export const LOGIN_CONCURRENCY = 16;
/** Never fetched: the code is read from the redirect's Location. */
const REDIRECT = "https://rp.example/cb";

/** A web application (code flow, Basic) and one user with a password per concurrent client. */
export interface LoginSeed {
  port: number;
  host: string;
  clientId: string;
  basic: string;
  loginNames: string[];
}

export async function seedLogin(service: ServiceUnderTest): Promise<LoginSeed> {
  const call = async (method: string, path: string, status: number, body?: unknown) => {
    const res = await requestJson(service.port, method, path, { headers: service.headers, body });
    if (res.status !== status) throw new Error(`seeding the login: ${method} ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const projectId = ((await call("POST", "/resources/v3alpha/projects", 201, { name: "bench-login" })) as Created).details.id;
  const app = (await call("POST", `/resources/v3alpha/projects/${projectId}/apps`, 201, {
    name: "bench-web",
    oidc: {
      redirectUris: [REDIRECT],
      responseTypes: ["OIDC_RESPONSE_TYPE_CODE"],
      grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE"],
      appType: "OIDC_APP_TYPE_WEB",
      authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
      accessTokenType: "OIDC_TOKEN_TYPE_BEARER",
    },
  })) as { clientId: string; clientSecret: string };
  // One user per client: the per-login-name rate limit and the user's row lock stay out of the way.
  const loginNames: string[] = [];
  for (let n = 0; n < LOGIN_CONCURRENCY; n++) {
    const username = `bench-login-${n}`;
    await call("POST", "/resources/v3alpha/users", 201, {
      username,
      human: { profile: { givenName: "Bench", familyName: `Login ${n}` }, email: { address: `${username}@example.com` }, password: USER_PASSWORD },
    });
    loginNames.push(username);
  }
  return { port: service.port, host: service.headers.host, clientId: app.clientId, basic: basic(app.clientId, app.clientSecret), loginNames };
}

export interface Reply {
  status: number;
  location: string | undefined;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: LOGIN_CONCURRENCY * 2 });

/** One request of a browser (a cookie jar keyed by name, as the flow's cookies never clash) or of the client. */
export function send(
  seed: LoginSeed,
  jar: Map<string, string>,
  method: "GET" | "POST",
  path: string,
  fields?: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const body = fields ? form(fields) : undefined;
  const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: HOST,
        port: seed.port,
        method,
        path,
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        headers: {
          host: seed.host,
          ...(cookie && { cookie }),
          ...(body !== undefined && { "content-type": FORM, "content-length": Buffer.byteLength(body) }),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          for (const line of res.headers["set-cookie"] ?? []) {
            const pair = line.split(";", 1)[0]!;
            const at = pair.indexOf("=");
            jar.set(pair.slice(0, at), pair.slice(at + 1));
          }
          resolve({ status: res.statusCode ?? 0, location: res.headers.location, body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on("error", reject);
    req.end(body);
  });
}

const b64url = (b: Buffer) => b.toString("base64url");

export function expect(reply: Reply, status: number, step: string): Reply {
  if (reply.status !== status) throw new Error(`${step}: ${reply.status} instead of ${status}: ${reply.body.slice(0, 300)}`);
  return reply;
}

/**
 * One sign-in as a relying party and a browser do it: the authorization request (code,
 * S256), the login name page, the password, the provider's resumption and the service's
 * consent, up to the redirect with the code; then the code at the token endpoint. Returns
 * how many HTTP requests it took; throws on anything unexpected.
 */
export async function passwordLogin(seed: LoginSeed, n: number): Promise<number> {
  const jar = new Map<string, string>();
  const loginName = seed.loginNames[n % seed.loginNames.length]!;
  const { login, csrf, state, verifier } = await loginPage(seed, jar);
  expect(await send(seed, jar, "POST", `${login}/loginname`, { csrf, loginName }), 200, "login name");
  const reply = expect(await send(seed, jar, "POST", `${login}/password`, { csrf, loginName, password: USER_PASSWORD }), 303, "password");
  const back = await toClient(seed, jar, reply);
  await redeemCode(seed, back.reply, state, verifier);
  return 4 + back.hops + 1;
}

const pathOf = (seed: LoginSeed, location: string | undefined) => {
  const url = new URL(location ?? "/", `http://${seed.host}`);
  return `${url.pathname}${url.search}`;
};

/**
 * Follows the service's redirects after a login step (`reply`) until the one to the client:
 * the provider resumes, asks the service's consent on a second interaction, resumes again.
 */
export async function toClient(seed: LoginSeed, jar: Map<string, string>, reply: Reply): Promise<{ reply: Reply; hops: number }> {
  let hops = 0;
  for (; !reply.location?.startsWith(REDIRECT); hops++) {
    if (hops === 6) throw new Error(`no redirect to the client after ${hops} hops: ${reply.location}`);
    reply = expect(await send(seed, jar, "GET", pathOf(seed, reply.location)), 303, "resume");
  }
  return { reply, hops };
}

/** The authorization request (code, S256) and the login page it leads to, with the page's form token. */
export async function loginPage(seed: LoginSeed, jar: Map<string, string>) {
  const verifier = b64url(randomBytes(32));
  const state = b64url(randomBytes(12));
  const query = new URLSearchParams({
    client_id: seed.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "openid profile",
    state,
    code_challenge: b64url(createHash("sha256").update(verifier).digest()),
    code_challenge_method: "S256",
  });
  let reply = expect(await send(seed, jar, "GET", `/oauth/v2/authorize?${query}`), 303, "authorize");
  const login = pathOf(seed, reply.location);
  reply = expect(await send(seed, jar, "GET", login), 200, "login page");
  const csrf = /name="csrf" value="([^"]+)"/.exec(reply.body)?.[1];
  if (!csrf) throw new Error("login page: no csrf field");
  return { login, csrf, state, verifier, page: reply.body };
}

/** The code of the redirect to the client, redeemed at the token endpoint for an access and an ID token. */
export async function redeemCode(seed: LoginSeed, reply: Reply, state: string, verifier: string): Promise<void> {
  const callback = new URL(reply.location!);
  const code = callback.searchParams.get("code");
  if (!code || callback.searchParams.get("state") !== state) throw new Error(`callback without code or with another state: ${reply.location}`);
  reply = expect(
    await send(
      seed,
      new Map(),
      "POST",
      "/oauth/v2/token",
      { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier },
      { authorization: seed.basic },
    ),
    200,
    "token",
  );
  const tokens = JSON.parse(reply.body) as { access_token?: string; id_token?: string };
  if (!tokens.access_token || !tokens.id_token) throw new Error(`token: no access or ID token: ${reply.body.slice(0, 300)}`);
}

export function closeLoginSockets(): void {
  agent.destroy();
}
