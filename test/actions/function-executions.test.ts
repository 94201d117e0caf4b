import type { JsonObject } from "@bufbuild/protobuf";
import { decodeJwt } from "jose";
import * as client from "openid-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { okMessage } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Receiver } from "../support/target-receiver.js";
import { machineUser, humanUser, ok, uniqueName, Users } from "../users/helpers.js";
import { AUTH_CODE, BASIC, appClient, createProject, oidc } from "../apps/helpers.js";
import { Browser, formWith } from "../oidc/browser.js";

/*
 * Function executions: `function/preaccesstoken` before a JWT access token is signed and
 * `function/preuserinfo` before userinfo (and ID token) claims are answered, with a target
 * on 127.0.0.1 that adds claims, sets user metadata and writes log lines.
 */

const PLATFORM_SCOPE = "urn:platform:iam:org:project:id:platform:aud";
const LOG_AT = "urn:platform:iam:action:function/preaccesstoken:log";
const LOG_UI = "urn:platform:iam:action:function/preuserinfo:log";
const b64 = (s: string) => Buffer.from(s).toString("base64");

describe.each(DATABASE_KINDS)("function executions (%s)", (kind) => {
  let server: TestServer;
  let receiver: Receiver;
  let origin = "";
  let users: Users;
  let machine: { id: string; username: string; secret: string };
  const actions = () => protocolClient(PlatformActions, "grpc", server.baseUrl);
  const conditions: string[] = [];

  async function attach(fn: "preaccesstoken" | "preuserinfo", path: string, extra: JsonObject = {}) {
    const made = okMessage(
      await actions().call(
        "CreateTarget",
        { target: { name: uniqueName(path), restRequestResponse: { url: `${origin}/${path}` }, timeout: "5s", ...extra } },
        server.adminToken,
      ),
    );
    okMessage(await actions().call("PutExecution", { execution: { condition: { function: fn }, targets: [made.details.id] } }, server.adminToken));
    conditions.push(`function/${fn}`);
  }

  async function token(): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${server.baseUrl}/oauth/v2/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${machine.username}:${machine.secret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ grant_type: "client_credentials", scope: `openid profile ${PLATFORM_SCOPE}` }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
  const userinfo = async (accessToken: string) => {
    const res = await fetch(`${server.baseUrl}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    receiver = new Receiver();
    origin = await receiver.start();
    server = await startTestServer(kind, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true" });
    users = new Users(server);
    const username = uniqueName("fn");
    const id = await users.create(machineUser(username, { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }));
    machine = { id, username, secret: ok(await users.call("GenerateSecret", { id })).clientSecret as string };
  }, 120_000);
  afterEach(async () => {
    for (const id of new Set(conditions.splice(0))) okMessage(await actions().call("DeleteExecution", { id }, server.adminToken));
    receiver.answers.clear();
  });
  afterAll(async () => {
    await server?.close();
    receiver?.close();
  });

  it("adds claims to the JWT access token before it is signed; reserved and existing claims are logged, not taken", async () => {
    await attach("preaccesstoken", "at");
    receiver.answers.set("/at", () => ({
      json: {
        append_claims: [
          { key: "tier", value: "gold" },
          { key: "sub", value: "someone else" },
          { key: "urn:platform:iam:org:project:roles", value: { admin: {} } },
          // Not a claim: assigned as one, it would replace the prototype of the claims.
          { key: "__proto__", value: { sub: "someone else", email: "victim@example.com" } },
        ],
        append_log_claims: ["checked"],
      },
    }));
    const issued = await token();
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const claims = decodeJwt(issued.body.access_token as string);
    expect(claims).toMatchObject({ tier: "gold", sub: machine.id });
    expect(claims["urn:platform:iam:org:project:roles"]).toBeUndefined();
    expect(claims[LOG_AT]).toEqual([
      'key "sub" already exists',
      'key "urn:platform:iam:org:project:roles" is reserved',
      'key "__proto__" is not allowed',
      "checked",
    ]);
    expect(claims.email).toBeUndefined();
    const call = receiver.callsTo("/at").at(-1)!;
    expect(call.body).toMatchObject({
      function: "preaccesstoken",
      user: { id: machine.id, username: machine.username, type: "machine" },
      org: { id: server.defaultOrgId, name: expect.any(String), primary_domain: expect.any(String) },
      user_metadata: [],
      user_grants: [],
    });
    expect((call.body.userinfo as JsonObject).sub).toBe(machine.id);
  });

  it("adds claims to userinfo and sets user metadata the next call sees", async () => {
    await attach("preuserinfo", "ui");
    receiver.answers.set("/ui", () => ({
      json: { append_claims: [{ key: "department", value: "billing" }], set_user_metadata: [{ key: "last-seen", value: b64("today") }] },
    }));
    const issued = await token();
    expect(issued.status).toBe(200);
    const first = await userinfo(issued.body.access_token as string);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ sub: machine.id, department: "billing" });
    expect(first.body[LOG_UI]).toBeUndefined();
    expect(ok(await users.call("GetMetadata", { id: machine.id, key: "last-seen" })).metadata.value).toBe(b64("today"));
    await userinfo(issued.body.access_token as string);
    expect(receiver.callsTo("/ui").at(-1)!.body.user_metadata).toEqual([{ key: "last-seen", value: b64("today") }]);
  });

  it("refuses the token and userinfo when an interrupting target fails or forwards an error; a lenient one is only logged", async () => {
    const issued = await token();
    const accessToken = issued.body.access_token as string;
    await attach("preuserinfo", "strict", { interruptOnError: true });
    receiver.answers.set("/strict", () => ({ json: { forwardedStatusCode: 403, forwardedErrorMessage: "not today" } }));
    expect(await userinfo(accessToken)).toMatchObject({ status: 403, body: { error: "access_denied", error_description: "not today" } });
    receiver.answers.set("/strict", () => ({ status: 500 }));
    expect(await userinfo(accessToken)).toMatchObject({ status: 502, body: { error: "access_denied", error_description: "execution failed" } });

    await attach("preaccesstoken", "strict-at", { interruptOnError: true });
    receiver.answers.set("/strict-at", () => ({ status: 500 }));
    expect(await token()).toMatchObject({ status: 400, body: { error: "access_denied" } });

    // The same condition again: the lenient target replaces the strict one.
    await attach("preaccesstoken", "lenient-at");
    receiver.answers.set("/lenient-at", () => ({ status: 500 }));
    expect((await token()).status).toBe(200);
  });

  it("adds claims to the ID token of a person's sign-in (preuserinfo), as to userinfo", async () => {
    await attach("preuserinfo", "idt");
    receiver.answers.set("/idt", () => ({ json: { append_claims: [{ key: "favourite_colour", value: "teal" }] } }));
    const password = "Corr3ct-horse!";
    const person = uniqueName("fn-person");
    const personId = await users.create(humanUser(person, { password }));
    const projectId = await createProject(server.baseUrl, server.adminToken, uniqueName("fn-project"));
    const app = ok(
      await appClient(server.baseUrl, server.adminToken).call("CreateApp", {
        projectId,
        app: { name: "fn-web", oidc: oidc({ authMethodType: BASIC, grantTypes: [AUTH_CODE] }) },
      }),
    );
    const verifier = client.randomPKCECodeVerifier();
    const url = new URL("/oauth/v2/authorize", server.baseUrl);
    for (const [k, v] of Object.entries({
      client_id: app.clientId,
      redirect_uri: "https://app.example/cb",
      response_type: "code",
      scope: "openid profile",
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state: "s",
    }))
      url.searchParams.set(k, v as string);
    const b = new Browser(server.baseUrl);
    let page = await b.open(url.href);
    page = await b.submit(formWith(page.html, "loginName"), { loginName: person }, page.url);
    page = await b.submit(formWith(page.html, "password"), { password }, page.url);
    expect(page.left, page.html).toBe(true);
    const code = new URL(page.url).searchParams.get("code")!;
    const res = await fetch(`${server.baseUrl}/oauth/v2/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: "https://app.example/cb", code_verifier: verifier }),
    });
    const tokens = (await res.json()) as Record<string, string>;
    expect(res.status, JSON.stringify(tokens)).toBe(200);
    expect(decodeJwt(tokens.id_token!)).toMatchObject({ sub: personId, favourite_colour: "teal" });
    const seen = receiver.callsTo("/idt").at(-1)!.body;
    expect(seen).toMatchObject({ function: "preuserinfo", user: { id: personId, type: "human", human: { given_name: "Given" } } });
  });

  it("calls nothing while the actions feature is off", async () => {
    await attach("preaccesstoken", "off");
    const before = receiver.callsTo("/off").length;
    await setInstanceFlag(server, server.instanceId, "actions", false);
    try {
      expect((await token()).status).toBe(200);
      expect(receiver.callsTo("/off").length).toBe(before);
    } finally {
      await setInstanceFlag(server, server.instanceId, "actions", undefined);
    }
    expect((await token()).status).toBe(200);
    expect(receiver.callsTo("/off").length).toBe(before + 1);
  });
});
