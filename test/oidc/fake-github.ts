import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * GitHub's OAuth endpoints and user API as external login uses them, on 127.0.0.1: the
 * authorization endpoint sends the browser straight back with a code for `account` (the
 * person signed in at GitHub), the token endpoint redeems it for the registered client, and
 * the API answers `/api/user` and `/api/user/emails` for its access token.
 */

export interface GitHubAccount {
  /** The profile of GET /user; `email` is the public address, or null. */
  profile: { id: number; login: string; name: string; email: string | null };
  /** GET /user/emails; undefined: 404, as for a token without the scope user:email. */
  emails?: { email: string; primary: boolean; verified: boolean; visibility: string | null }[];
}

export interface FakeGitHub {
  url: string;
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  /** Who is signed in at GitHub for the next authorization. */
  account: GitHubAccount;
  /** The service's settings that send its GitHub providers here (on 127.0.0.1, so private addresses are allowed). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startFakeGitHub(): Promise<FakeGitHub> {
  const codes = new Map<string, GitHubAccount>();
  const tokens = new Map<string, GitHubAccount>();
  const fake = { clientId: "gh-client", clientSecret: "gh-secret", account: undefined as unknown as GitHubAccount };
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += String(chunk);
    const url = new URL(req.url ?? "/", "http://github.test");
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (req.method === "GET" && url.pathname === "/login/oauth/authorize") {
      const code = randomUUID();
      codes.set(code, fake.account);
      const back = new URL(url.searchParams.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state")!);
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (req.method === "POST" && url.pathname === "/login/oauth/access_token") {
      const form = new URLSearchParams(body);
      const account = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      // GitHub answers its errors with status 200 too.
      if (form.get("client_id") !== fake.clientId || form.get("client_secret") !== fake.clientSecret || !account)
        return json(200, { error: "bad_verification_code" });
      const token = randomUUID();
      tokens.set(token, account);
      return json(200, { access_token: token, token_type: "bearer", scope: "read:user,user:email" });
    }
    const account = tokens.get((req.headers.authorization ?? "").replace(/^Bearer /, ""));
    if (!account) return json(401, { message: "Bad credentials" });
    if (url.pathname === "/api/user") return json(200, account.profile);
    if (url.pathname === "/api/user/emails" && account.emails) return json(200, account.emails);
    json(404, { message: "Not Found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(fake, {
    url,
    apiUrl: `${url}/api`,
    env: { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true", PLATFORM_GITHUB_URL: url, PLATFORM_GITHUB_API_URL: `${url}/api` },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
