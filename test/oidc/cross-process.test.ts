import http from "node:http";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appClient, createProject, oidc, API_BASIC, AUTH_CODE, REFRESH, JWT } from "../apps/helpers.js";
import { spawnPeer } from "../support/child-service.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { humanUser, uniqueName, Users } from "../users/helpers.js";

const POSTGRES = process.env.TEST_DATABASE_URL;
const REDIRECT = "https://rp.example/cb";
const PASSWORD = "Corr3ct-horse!";

interface Answer {
  status: number;
  location: string | undefined;
  body: string;
  cookies: string[];
}

/**
 * Two service processes on one PostgreSQL database behind one name, as behind a load
 * balancer: every request names the same host (process A's), whichever process gets it,
 * so both act as the same issuer. Each step of a sign-in goes to the other process than
 * the step before; nothing but the database carries the flow.
 */
describe.skipIf(!POSTGRES)(
  "an OpenID Connect flow moves between processes (postgres only; skipped without TEST_DATABASE_URL: PGlite serves one process)",
  () => {
    let a: TestServer;
    let b: Awaited<ReturnType<typeof spawnPeer>>;
    let host: string;
    const jar = new Map<string, string>();

    /** One request to a process, as the browser or client would send it to the shared name. */
    function request(
      port: number,
      method: string,
      path: string,
      opts: { form?: Record<string, string>; headers?: Record<string, string> } = {},
    ): Promise<Answer> {
      const body = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
      return new Promise((resolve, reject) => {
        const req = http.request(
          {
            host: "127.0.0.1",
            port,
            method,
            path,
            headers: {
              host,
              ...(cookie && { cookie }),
              ...(body !== undefined && { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) }),
              ...opts.headers,
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => {
              const cookies = ([] as string[]).concat(res.headers["set-cookie"] ?? []);
              for (const c of cookies) {
                const [pair] = c.split(";");
                const at = pair!.indexOf("=");
                jar.set(pair!.slice(0, at), pair!.slice(at + 1));
              }
              resolve({ status: res.statusCode ?? 0, location: res.headers.location, body: Buffer.concat(chunks).toString("utf8"), cookies });
            });
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    }
    const pathOf = (location: string) => {
      const url = new URL(location, `http://${host}`);
      return `${url.pathname}${url.search}`;
    };

    beforeAll(async () => {
      a = await startTestServer("postgres");
      host = `localhost:${a.service.port}`;
      b = await spawnPeer(a.config.database as { url: string });
    });
    afterAll(async () => {
      await b?.cleanup();
      await a?.close();
    });

    it("signs in across both, and either process redeems, refreshes, introspects and verifies", async () => {
      const users = new Users(a);
      const loginName = uniqueName("ann");
      const userId = await users.create(humanUser(loginName, { password: PASSWORD }));
      const projectId = await createProject(a.baseUrl, a.adminToken, "cross");
      const apps = appClient(a.baseUrl, a.adminToken);
      const web = await apps.ok("CreateApp", {
        projectId,
        app: { name: "web", oidc: oidc({ redirectUris: [REDIRECT], grantTypes: [AUTH_CODE, REFRESH], accessTokenType: JWT }) },
      });
      const api = await apps.ok("CreateApp", { projectId, app: { name: "api", api: { authMethodType: API_BASIC } } });
      const pA = a.service.port;
      const pB = b.port;

      const query = new URLSearchParams({
        client_id: web.clientId,
        redirect_uri: REDIRECT,
        response_type: "code",
        scope: "openid profile offline_access",
        state: "st",
      });
      let res = await request(pA, "GET", `/oauth/v2/authorize?${query}`);
      expect(res.status).toBe(303);
      const login = pathOf(res.location!);
      expect(login).toMatch(/^\/ui\/login\/[\w-]+$/);
      res = await request(pB, "GET", login);
      expect(res.status).toBe(200);
      const csrf = /name="csrf" value="([^"]+)"/.exec(res.body)![1]!;
      res = await request(pA, "POST", `${login}/loginname`, { form: { csrf, loginName } });
      expect(res.status).toBe(200);
      expect(res.body).toContain('name="password"');
      res = await request(pB, "POST", `${login}/password`, { form: { csrf, loginName, password: PASSWORD } });
      expect(res.status).toBe(303);
      // Resume and consent, alternating, until the client's redirect URI.
      let port = pA;
      for (let i = 0; i < 6 && !res.location!.startsWith(REDIRECT); i++) {
        res = await request(port, "GET", pathOf(res.location!));
        expect(res.status, res.body).toBe(303);
        port = port === pA ? pB : pA;
      }
      const callback = new URL(res.location!);
      expect(callback.searchParams.get("state")).toBe("st");
      const code = callback.searchParams.get("code")!;

      const basic = `Basic ${Buffer.from(`${web.clientId}:${web.clientSecret}`).toString("base64")}`;
      res = await request(pB, "POST", "/oauth/v2/token", {
        form: { grant_type: "authorization_code", code, redirect_uri: REDIRECT },
        headers: { authorization: basic },
      });
      expect(res.status, res.body).toBe(200);
      const tokens = JSON.parse(res.body) as { access_token: string; refresh_token: string; id_token: string };

      // Both processes sign with the instance's keys and publish the same set.
      const jwksA = JSON.parse((await request(pA, "GET", "/oauth/v2/keys")).body);
      const jwksB = JSON.parse((await request(pB, "GET", "/oauth/v2/keys")).body);
      expect(jwksB).toEqual(jwksA);
      const keys = createRemoteJWKSet(new URL(`${a.baseUrl}/oauth/v2/keys`));
      const { payload } = await jwtVerify(tokens.id_token, keys, { issuer: `http://${host}`, audience: web.clientId });
      expect(payload.sub).toBe(userId);

      res = await request(pA, "POST", "/oauth/v2/token", {
        form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token },
        headers: { authorization: basic },
      });
      expect(res.status, res.body).toBe(200);
      const refreshed = JSON.parse(res.body) as { access_token: string; refresh_token: string };
      const apiBasic = `Basic ${Buffer.from(`${api.clientId}:${api.clientSecret}`).toString("base64")}`;
      res = await request(pB, "POST", "/oauth/v2/introspect", { form: { token: refreshed.access_token }, headers: { authorization: apiBasic } });
      expect(JSON.parse(res.body)).toMatchObject({ active: true, sub: userId, client_id: web.clientId });

      res = await request(pB, "POST", "/oauth/v2/token", {
        form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token },
        headers: { authorization: basic },
      });
      expect(JSON.parse(res.body).error).toBe("invalid_grant");
      // Reusing the old refresh token ended the grant, at whichever process it was tried.
      res = await request(pA, "POST", "/oauth/v2/introspect", { form: { token: refreshed.access_token }, headers: { authorization: apiBasic } });
      expect(JSON.parse(res.body).active).toBe(false);
      // Nor can the code be redeemed again, at either process.
      res = await request(pA, "POST", "/oauth/v2/token", {
        form: { grant_type: "authorization_code", code, redirect_uri: REDIRECT },
        headers: { authorization: basic },
      });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error).toBe("invalid_grant");
    });
  },
);
