import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { SoftwareAuthenticator } from "../support/webauthn-authenticator.js";
import { failed, humanUser, machineUser, ok, uniqueName, Users, type Msg } from "./helpers.js";

/**
 * Registering passkeys through PlatformUsers, black-box: the options the service asks the
 * browser for, the answer of a software authenticator (test/support/webauthn-authenticator.ts)
 * in place of the browser's, and every kind of answer it must refuse.
 */

/** The test server's instance domain (PLATFORM_EXTERNAL_URL http://localhost), the relying party id. */
const RP_ID = "localhost";
const PASSWORD_M = "AUTH_METHOD_TYPE_PASSWORD";
const PASSKEY_M = "AUTH_METHOD_TYPE_PASSKEY";

describe.each(DATABASE_KINDS)("passkey registration (%s)", (kind) => {
  let server: TestServer;
  let admin: Users;
  /** Answers as a page of the service itself would: http://localhost:<port>. */
  let origin: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    admin = new Users(server);
    origin = server.baseUrl;
  });
  afterAll(() => server?.close());

  const person = (users = admin) => users.create(humanUser(uniqueName("pk"), { password: "Passkey-Pa55word!" }));
  const start = async (id: string, users = admin, extra: JsonObject = {}) => {
    const started = ok(await users.call("StartPasskeyRegistration", { id, domain: RP_ID, ...extra }));
    return { passkeyId: started.passkeyId as string, options: started.publicKeyCredentialCreationOptions as Msg };
  };
  const finish = (id: string, passkeyId: string, publicKeyCredential: object, users = admin, name = "Laptop") =>
    users.call("FinishPasskeyRegistration", { id, passkeyId, publicKeyCredential, name });
  const passkeysOf = async (id: string, users = admin): Promise<Msg[]> => ok(await users.call("ListPasskeys", { id })).result ?? [];
  const methodsOf = async (id: string): Promise<string[]> => ok(await admin.call("ListAuthMethods", { id })).authMethodTypes ?? [];

  it.each(PROTOCOLS)(
    "starts with options for a discoverable, user-verified credential of the domain and the user; finishes with the authenticator's answer (%s)",
    async (protocol) => {
      const users = new Users(server, protocol);
      const id = await person();
      const started = ok(await users.call("StartPasskeyRegistration", { id, domain: RP_ID, authenticatorType: "PASSKEY_AUTHENTICATOR_PLATFORM" }));
      expect(started.details).toMatchObject({ id });
      const options = started.publicKeyCredentialCreationOptions as Msg;
      expect(options.rp).toMatchObject({ id: RP_ID, name: expect.any(String) });
      expect(options.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required", authenticatorAttachment: "platform" });
      expect(Buffer.from(options.user.id, "base64url").toString("utf8")).toBe(id);
      expect(options.challenge).toMatch(/^[\w-]{16,}$/);
      expect(options.excludeCredentials ?? []).toEqual([]);
      expect(options.pubKeyCredParams).toContainEqual({ alg: -7, type: "public-key" });
      // Started, not finished: listed as pending, no way of signing in yet.
      expect(await passkeysOf(id, users)).toEqual([{ id: started.passkeyId, state: "PASSKEY_STATE_PENDING", domain: RP_ID, creationDate: expect.any(String) }]);
      expect(await methodsOf(id)).toEqual([PASSWORD_M]);

      const answer = new SoftwareAuthenticator(origin).create(options);
      const finished = ok(await finish(id, started.passkeyId, answer, users, `Laptop ${protocol}`));
      expect(BigInt(finished.details.sequence)).toBeGreaterThan(BigInt(started.details.sequence));
      expect(await passkeysOf(id, users)).toEqual([
        { id: started.passkeyId, name: `Laptop ${protocol}`, state: "PASSKEY_STATE_READY", domain: RP_ID, creationDate: expect.any(String) },
      ]);
      expect(await methodsOf(id)).toEqual([PASSWORD_M, PASSKEY_M]);
    },
  );

  it("serves the documented REST paths with the bodies a curl user sends", async () => {
    const id = await person();
    const call = async (method: string, path: string, body?: object) => {
      const res = await fetch(`${server.baseUrl}/resources/v3alpha/users/${id}/passkeys${path}`, {
        method,
        headers: { authorization: `Bearer ${server.adminToken}`, ...(body && { "content-type": "application/json" }) },
        ...(body && { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as Msg };
    };
    const started = await call("POST", "/_start_registration", { domain: RP_ID, authenticatorType: "PASSKEY_AUTHENTICATOR_CROSS_PLATFORM" });
    expect(started).toMatchObject({
      status: 200,
      json: { details: { id }, passkeyId: expect.any(String), publicKeyCredentialCreationOptions: { rp: { id: RP_ID } } },
    });
    expect(started.json.publicKeyCredentialCreationOptions.authenticatorSelection.authenticatorAttachment).toBe("cross-platform");
    const passkeyId = started.json.passkeyId as string;
    const answer = new SoftwareAuthenticator(origin).create(started.json.publicKeyCredentialCreationOptions);
    expect(await call("POST", `/${passkeyId}/_finish_registration`, { publicKeyCredential: answer, name: "Key" })).toMatchObject({
      status: 200,
      json: { details: { id } },
    });
    expect(await call("GET", "")).toMatchObject({ status: 200, json: { result: [{ id: passkeyId, name: "Key", state: "PASSKEY_STATE_READY" }] } });
    expect((await call("DELETE", `/${passkeyId}`)).status).toBe(200);
    expect(await call("DELETE", `/${passkeyId}`)).toMatchObject({ status: 404, json: { code: Code.NotFound } });
    expect(await call("GET", "")).toEqual({ status: 200, json: {} });
  });

  it("a domain that is not one of the instance's is InvalidArgument, and starts nothing", async () => {
    const id = await person();
    for (const domain of ["example.com", "evil.localhost", "localhost.example"]) {
      expect(failed(await admin.call("StartPasskeyRegistration", { id, domain }), Code.InvalidArgument).message, domain).toContain(
        "no domain of this instance",
      );
    }
    expect(await passkeysOf(id)).toEqual([]);
  });

  it("an answer made on another origin, for another challenge or without user verification is InvalidArgument; the registration can still be finished", async () => {
    const id = await person();
    const { passkeyId, options } = await start(id);
    const authenticator = new SoftwareAuthenticator(origin);
    // Each with the words of the check that refused it, so that none passes for another reason.
    const wrong: [string, object][] = [
      ["evil.example", authenticator.create(options, { origin: "https://evil.example" })],
      ["127.0.0.1", authenticator.create(options, { origin: server.baseUrl.replace("localhost", "127.0.0.1") })],
      ["challenge", authenticator.create(options, { challenge: Buffer.from("not the challenge").toString("base64url") })],
      ["User verification", authenticator.create(options, { flags: { uv: false } })],
      ["User presence", authenticator.create(options, { flags: { up: false } })],
    ];
    for (const [words, answer] of wrong) expect(failed(await finish(id, passkeyId, answer), Code.InvalidArgument).message).toContain(words);
    expect((await passkeysOf(id)).map((p) => p.state)).toEqual(["PASSKEY_STATE_PENDING"]);
    // A page on a subdomain over https counts for the domain.
    ok(await finish(id, passkeyId, authenticator.create(options, { origin: "https://login.localhost:8443" })));
    expect(await methodsOf(id)).toEqual([PASSWORD_M, PASSKEY_M]);
  });

  it("takes an answer made over http on a name under .localhost, a secure context to browsers (the README's instances are named so)", async () => {
    const id = await person();
    const { passkeyId, options } = await start(id);
    ok(await finish(id, passkeyId, new SoftwareAuthenticator(origin).create(options, { origin: "http://acme-corp.localhost:8080" })));
    expect((await passkeysOf(id)).map((p) => p.state)).toEqual(["PASSKEY_STATE_READY"]);
  });

  it("finishing twice is FailedPrecondition; an unknown passkey id is NotFound; a new start replaces a pending one", async () => {
    const id = await person();
    const authenticator = new SoftwareAuthenticator(origin);
    const abandoned = await start(id);
    const { passkeyId, options } = await start(id);
    expect((await passkeysOf(id)).map((p) => p.id)).toEqual([passkeyId]);
    failed(await finish(id, abandoned.passkeyId, authenticator.create(abandoned.options)), Code.NotFound);

    const answer = authenticator.create(options);
    ok(await finish(id, passkeyId, answer));
    expect(failed(await finish(id, passkeyId, answer), Code.FailedPrecondition).message).toContain("registered already");
    failed(await finish(id, "01a20000-0000-7000-8000-00000000f00d", answer), Code.NotFound);
    failed(await admin.call("RemovePasskey", { id, passkeyId: "01a20000-0000-7000-8000-00000000f00d" }), Code.NotFound);
    // Another user's passkey id is no passkey of this one.
    const other = await person();
    failed(await finish(other, passkeyId, answer), Code.NotFound);
    failed(await admin.call("RemovePasskey", { id: other, passkeyId }), Code.NotFound);
    expect((await passkeysOf(id)).map((p) => p.state)).toEqual(["PASSKEY_STATE_READY"]);
  });

  it("the same authenticator credential twice: excluded in the options, and AlreadyExists when answered anyway (for this user or another)", async () => {
    const id = await person();
    const authenticator = new SoftwareAuthenticator(origin);
    const first = await start(id);
    ok(await finish(id, first.passkeyId, authenticator.create(first.options)));
    const credential = authenticator.credentials[0]!;

    const second = await start(id);
    expect(second.options.excludeCredentials).toEqual([expect.objectContaining({ id: credential.id, type: "public-key" })]);
    expect(failed(await finish(id, second.passkeyId, authenticator.create(second.options, { reuse: credential })), Code.AlreadyExists).message).toContain(
      "registered already",
    );
    // The same authenticator registers a credential of its own just fine.
    ok(await finish(id, second.passkeyId, authenticator.create(second.options), admin, "Second"));

    const other = await person();
    const theirs = await start(other);
    expect(theirs.options.excludeCredentials ?? []).toEqual([]);
    failed(await finish(other, theirs.passkeyId, authenticator.create(theirs.options, { reuse: credential })), Code.AlreadyExists);
    expect((await passkeysOf(id)).map((p) => p.name)).toEqual(["Second", "Laptop"]);
    expect((await passkeysOf(other)).map((p) => p.state)).toEqual(["PASSKEY_STATE_PENDING"]);
  });

  it("a machine user has no passkeys: starting, finishing and removing are FailedPrecondition", async () => {
    const id = await admin.create(machineUser(uniqueName("pksvc")));
    expect(failed(await admin.call("StartPasskeyRegistration", { id, domain: RP_ID }), Code.FailedPrecondition).message).toContain("machine user");
    failed(await finish(id, "01a20000-0000-7000-8000-00000000f00d", { id: "x", rawId: "x", type: "public-key", response: {} }), Code.FailedPrecondition);
    failed(await admin.call("RemovePasskey", { id, passkeyId: "01a20000-0000-7000-8000-00000000f00d" }), Code.FailedPrecondition);
    expect(await passkeysOf(id)).toEqual([]);
  });

  it("a person registers, lists and removes its own passkeys with its own token; another person's are PermissionDenied", async () => {
    const id = await person();
    const me = admin.as((await admin.pat(id)).token);
    const authenticator = new SoftwareAuthenticator(origin);
    const { passkeyId, options } = await start(id, me);
    ok(await finish(id, passkeyId, authenticator.create(options), me));
    expect((await passkeysOf(id, me)).map((p) => p.id)).toEqual([passkeyId]);

    const other = await person();
    const theirs = await start(other);
    const denied = [
      await me.call("StartPasskeyRegistration", { id: other, domain: RP_ID }),
      await finish(other, theirs.passkeyId, authenticator.create(theirs.options), me),
      await me.call("ListPasskeys", { id: other }),
      await me.call("RemovePasskey", { id: other, passkeyId: theirs.passkeyId }),
    ];
    for (const r of denied) failed(r, Code.PermissionDenied);
    expect((await passkeysOf(other)).map((p) => [p.id, p.state])).toEqual([[theirs.passkeyId, "PASSKEY_STATE_PENDING"]]);

    ok(await me.call("RemovePasskey", { id, passkeyId }));
    failed(await me.call("RemovePasskey", { id, passkeyId }), Code.NotFound);
    expect(await passkeysOf(id, me)).toEqual([]);
    expect(await methodsOf(id)).toEqual([PASSWORD_M]);
  });
});
