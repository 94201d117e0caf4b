import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { PROTOCOLS, protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { SoftwareAuthenticator } from "../support/webauthn-authenticator.js";
import { createOrg, failed, humanUser, machineUser, ok, uniqueName, Users, type Msg } from "./helpers.js";
import { totpCode } from "./totp.js";

/**
 * Security keys (U2F / WebAuthn as a second factor) through PlatformUsers, black-box, with
 * the software authenticator of the passkey tests: the options (user verification preferred,
 * no discoverable credential), registration without user verification, the kinds kept apart
 * (a security key is no passkey and the other way round), and the rule that people may not
 * remove their last factor while one is forced, where security keys and passkeys count as the
 * login settings allow them.
 */

const RP_ID = "localhost";
const PASSWORD = "Security-Key-Pa55!";
const M = (type: string) => `AUTH_METHOD_TYPE_${type}`;

describe.each(DATABASE_KINDS)("security keys (%s)", (kind) => {
  let server: TestServer;
  let admin: Users;

  beforeAll(async () => {
    server = await startTestServer(kind);
    admin = new Users(server);
  });
  afterAll(() => server?.close());

  const person = (ctx?: object) => admin.create(humanUser(uniqueName("u2f"), { password: PASSWORD }), ctx);
  const start = async (id: string, users = admin) => {
    const started = ok(await users.call("StartU2FRegistration", { id, domain: RP_ID }));
    return { u2fId: started.u2fId as string, options: started.publicKeyCredentialCreationOptions as Msg };
  };
  const finish = (id: string, u2fId: string, publicKeyCredential: object, users = admin, name = "YubiKey") =>
    users.call("FinishU2FRegistration", { id, u2fId, publicKeyCredential, name });
  /** A security key registered for the user as a key without a PIN registers it (no user verification): its id and authenticator. */
  async function withKey(id: string, users = admin, name = "YubiKey") {
    const authenticator = new SoftwareAuthenticator(server.baseUrl, { uv: false });
    const { u2fId, options } = await start(id, users);
    ok(await finish(id, u2fId, authenticator.create(options), users, name));
    return { u2fId, authenticator };
  }
  const keysOf = async (id: string, users = admin): Promise<Msg[]> => ok(await users.call("ListU2F", { id })).result ?? [];
  const methodsOf = async (id: string): Promise<string[]> => ok(await admin.call("ListAuthMethods", { id })).authMethodTypes ?? [];

  it.each(PROTOCOLS)(
    "starts with options for a key of the domain and the user (user verification preferred, no resident key); finishes with an answer without user verification (%s)",
    async (protocol) => {
      const users = new Users(server, protocol);
      const id = await person();
      const started = ok(await users.call("StartU2FRegistration", { id, domain: RP_ID }));
      expect(started.details).toMatchObject({ id });
      const options = started.publicKeyCredentialCreationOptions as Msg;
      expect(options.rp).toMatchObject({ id: RP_ID, name: expect.any(String) });
      expect(options.authenticatorSelection).toEqual({ residentKey: "discouraged", requireResidentKey: false, userVerification: "preferred" });
      expect(Buffer.from(options.user.id, "base64url").toString("utf8")).toBe(id);
      expect(options.challenge).toMatch(/^[\w-]{16,}$/);
      expect(await keysOf(id, users)).toEqual([{ id: started.u2fId, state: "U2F_STATE_PENDING", domain: RP_ID, creationDate: expect.any(String) }]);
      expect(await methodsOf(id)).toEqual([M("PASSWORD")]);

      const answer = new SoftwareAuthenticator(server.baseUrl, { uv: false }).create(options);
      const finished = ok(await finish(id, started.u2fId, answer, users, `Key ${protocol}`));
      expect(BigInt(finished.details.sequence)).toBeGreaterThan(BigInt(started.details.sequence));
      expect(await keysOf(id, users)).toEqual([
        { id: started.u2fId, name: `Key ${protocol}`, state: "U2F_STATE_READY", domain: RP_ID, creationDate: expect.any(String) },
      ]);
      expect(await methodsOf(id)).toEqual([M("PASSWORD"), M("U2F")]);
      // A security key is no passkey.
      expect(ok(await users.call("ListPasskeys", { id })).result ?? []).toEqual([]);

      ok(await users.call("RemoveU2F", { id, u2fId: started.u2fId }));
      expect(await keysOf(id, users)).toEqual([]);
      expect(await methodsOf(id)).toEqual([M("PASSWORD")]);
    },
  );

  it("serves the documented REST paths with the bodies a curl user sends; the events name the kind", async () => {
    const id = await person();
    const call = async (method: string, path: string, body?: object) => {
      const res = await fetch(`${server.baseUrl}/resources/v3alpha/users/${id}/u2f${path}`, {
        method,
        headers: { authorization: `Bearer ${server.adminToken}`, ...(body && { "content-type": "application/json" }) },
        ...(body && { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as Msg };
    };
    const started = await call("POST", "/_start_registration", { domain: RP_ID });
    expect(started).toMatchObject({
      status: 200,
      json: { details: { id }, u2fId: expect.any(String), publicKeyCredentialCreationOptions: { rp: { id: RP_ID } } },
    });
    const u2fId = started.json.u2fId as string;
    const answer = new SoftwareAuthenticator(server.baseUrl, { uv: false }).create(started.json.publicKeyCredentialCreationOptions);
    expect(await call("POST", `/${u2fId}/_finish_registration`, { publicKeyCredential: answer, name: "Key" })).toMatchObject({
      status: 200,
      json: { details: { id } },
    });
    expect(await call("GET", "")).toMatchObject({ status: 200, json: { result: [{ id: u2fId, name: "Key", state: "U2F_STATE_READY" }] } });
    expect((await call("DELETE", `/${u2fId}`)).status).toBe(200);
    expect(await call("DELETE", `/${u2fId}`)).toMatchObject({ status: 404, json: { code: Code.NotFound } });
    expect(await call("GET", "")).toEqual({ status: 200, json: {} });
    const events = await server.service.store.db
      .selectFrom("events")
      .select(["event_type", "payload"])
      .where("aggregate_type", "=", "user")
      .where("aggregate_id", "=", id)
      .where("event_type", "like", "user.u2f.%")
      .orderBy("sequence")
      .execute();
    expect(events).toEqual([
      { event_type: "user.u2f.added", payload: { id: u2fId, rpId: RP_ID } },
      { event_type: "user.u2f.verified", payload: { id: u2fId, name: "Key" } },
      { event_type: "user.u2f.removed", payload: { id: u2fId } },
    ]);
  });

  it("refuses an answer on another origin, for another challenge or without user presence (InvalidArgument), and a domain not the instance's", async () => {
    const id = await person();
    expect(failed(await admin.call("StartU2FRegistration", { id, domain: "example.com" }), Code.InvalidArgument).message).toContain(
      "no domain of this instance",
    );
    const { u2fId, options } = await start(id);
    const authenticator = new SoftwareAuthenticator(server.baseUrl, { uv: false });
    const wrong: [string, object][] = [
      ["evil.example", authenticator.create(options, { origin: "https://evil.example" })],
      ["challenge", authenticator.create(options, { challenge: Buffer.from("not the challenge").toString("base64url") })],
      ["User presence", authenticator.create(options, { flags: { up: false } })],
    ];
    for (const [words, answer] of wrong) expect(failed(await finish(id, u2fId, answer), Code.InvalidArgument).message).toContain(words);
    expect((await keysOf(id)).map((k) => k.state)).toEqual(["U2F_STATE_PENDING"]);
    // A key that verifies the person (a PIN) is a security key just as well.
    ok(await finish(id, u2fId, authenticator.create(options, { flags: { uv: true } })));
    expect(await methodsOf(id)).toEqual([M("PASSWORD"), M("U2F")]);
  });

  it("keeps the kinds apart: a security key's id is no passkey's and the other way round; one credential is never both", async () => {
    const id = await person();
    const { u2fId, authenticator } = await withKey(id);
    failed(await admin.call("RemovePasskey", { id, passkeyId: u2fId }), Code.NotFound);
    const passkey = ok(await admin.call("StartPasskeyRegistration", { id, domain: RP_ID }));
    failed(await finish(id, passkey.passkeyId, authenticator.create(passkey.publicKeyCredentialCreationOptions)), Code.NotFound);
    failed(await admin.call("RemoveU2F", { id, u2fId: passkey.passkeyId }), Code.NotFound);
    // The key registered as a security key is excluded from the passkey's registration, and refused when answered anyway.
    const credential = authenticator.credentials[0]!;
    expect(passkey.publicKeyCredentialCreationOptions.excludeCredentials).toEqual([expect.objectContaining({ id: credential.id })]);
    const reused = authenticator.create(passkey.publicKeyCredentialCreationOptions, { reuse: credential, flags: { uv: true } });
    expect(
      failed(
        await admin.call("FinishPasskeyRegistration", { id, passkeyId: passkey.passkeyId, publicKeyCredential: reused, name: "Twice" }),
        Code.AlreadyExists,
      ).message,
    ).toContain("registered already");
    // A passkey and a security key side by side: each listed by its own call.
    ok(
      await admin.call("FinishPasskeyRegistration", {
        id,
        passkeyId: passkey.passkeyId,
        publicKeyCredential: authenticator.create(passkey.publicKeyCredentialCreationOptions, { flags: { uv: true } }),
        name: "Laptop",
      }),
    );
    expect((await keysOf(id)).map((k) => k.name)).toEqual(["YubiKey"]);
    expect(ok(await admin.call("ListPasskeys", { id })).result.map((p: Msg) => p.name)).toEqual(["Laptop"]);
    expect(await methodsOf(id)).toEqual([M("PASSWORD"), M("PASSKEY"), M("U2F")]);
  });

  it("a machine user has no security keys; finishing twice is FailedPrecondition; another user's key is NotFound", async () => {
    const machine = await admin.create(machineUser(uniqueName("u2fsvc")));
    expect(failed(await admin.call("StartU2FRegistration", { id: machine, domain: RP_ID }), Code.FailedPrecondition).message).toContain("machine user");
    failed(await admin.call("RemoveU2F", { id: machine, u2fId: "01a20000-0000-7000-8000-00000000f00d" }), Code.FailedPrecondition);

    const id = await person();
    const { u2fId, options } = await start(id);
    const answer = new SoftwareAuthenticator(server.baseUrl, { uv: false }).create(options);
    ok(await finish(id, u2fId, answer));
    expect(failed(await finish(id, u2fId, answer), Code.FailedPrecondition).message).toContain("security key");
    const other = await person();
    failed(await admin.call("RemoveU2F", { id: other, u2fId }), Code.NotFound);
    expect((await keysOf(id)).map((k) => k.state)).toEqual(["U2F_STATE_READY"]);
  });

  it("a person registers, lists and removes its own keys with its own token; another person's are PermissionDenied", async () => {
    const id = await person();
    const me = admin.as((await admin.pat(id)).token);
    const { u2fId } = await withKey(id, me);
    expect((await keysOf(id, me)).map((k) => k.id)).toEqual([u2fId]);

    const other = await person();
    const theirs = await start(other);
    const denied = [
      await me.call("StartU2FRegistration", { id: other, domain: RP_ID }),
      await finish(other, theirs.u2fId, new SoftwareAuthenticator(server.baseUrl).create(theirs.options), me),
      await me.call("ListU2F", { id: other }),
      await me.call("RemoveU2F", { id: other, u2fId: theirs.u2fId }),
    ];
    for (const r of denied) failed(r, Code.PermissionDenied);
    expect((await keysOf(other)).map((k) => [k.id, k.state])).toEqual([[theirs.u2fId, "U2F_STATE_PENDING"]]);
    ok(await me.call("RemoveU2F", { id, u2fId }));
    expect(await keysOf(id, me)).toEqual([]);
  });

  describe("with force_mfa, people keep one factor the login settings allow", () => {
    const loginSettings = (settings: JsonObject, orgId: string) =>
      protocolClient(PlatformLoginSettings, "grpc", server.baseUrl).call("SetLoginSettings", { settings, ctx: { orgId } }, server.adminToken);
    /** A person of a new organization whose login settings force a second factor (and `settings` besides), with its own client. */
    async function forced(settings: JsonObject = {}) {
      const org = await createOrg(server, uniqueName("u2f-forced"));
      ok(await loginSettings({ forceMfa: { set: true }, ...settings }, org.id));
      const id = await person({ orgId: org.id });
      return { org, id, me: admin.as((await admin.pat(id)).token) };
    }

    it("a security key counts: the last one stays (an administrator may remove it), one of two goes, and a TOTP may go while a key is left", async () => {
      const { id, me } = await forced();
      const first = await withKey(id, me, "First");
      expect(failed(await me.call("RemoveU2F", { id, u2fId: first.u2fId }), Code.FailedPrecondition).message).toContain("last");
      expect(await keysOf(id)).toHaveLength(1);
      const second = await withKey(id, me, "Second");
      ok(await me.call("RemoveU2F", { id, u2fId: first.u2fId }));
      failed(await me.call("RemoveU2F", { id, u2fId: second.u2fId }), Code.FailedPrecondition);

      const { secret } = ok(await me.call("AddTOTP", { id }));
      ok(await me.call("VerifyTOTP", { id, verification: { code: totpCode(secret) } }));
      ok(await me.call("RemoveTOTP", { id }));
      ok(await admin.call("RemoveU2F", { id, u2fId: second.u2fId }));
      expect(await methodsOf(id)).toEqual([M("PASSWORD")]);
      // A pending registration is no factor: dropping it is fine.
      const pending = await start(id, me);
      ok(await me.call("RemoveU2F", { id, u2fId: pending.u2fId }));
    });

    it("a security key the settings do not allow (second_factors without U2F) is no factor: it may go, and a TOTP beside it is the last", async () => {
      const { id, me } = await forced({ secondFactors: { set: { types: ["SECOND_FACTOR_TYPE_TOTP"] } } });
      const key = await withKey(id, me);
      const { secret } = ok(await me.call("AddTOTP", { id }));
      ok(await me.call("VerifyTOTP", { id, verification: { code: totpCode(secret) } }));
      expect(failed(await me.call("RemoveTOTP", { id }), Code.FailedPrecondition).message).toContain("last");
      ok(await me.call("RemoveU2F", { id, u2fId: key.u2fId }));
      expect(await methodsOf(id)).toEqual([M("PASSWORD"), M("TOTP")]);
    });

    it("a passkey counts where multi_factors has PASSKEY (the default), not where it is empty", async () => {
      const register = async (id: string, me: Users) => {
        const started = ok(await me.call("StartPasskeyRegistration", { id, domain: RP_ID }));
        ok(
          await me.call("FinishPasskeyRegistration", {
            id,
            passkeyId: started.passkeyId,
            publicKeyCredential: new SoftwareAuthenticator(server.baseUrl).create(started.publicKeyCredentialCreationOptions),
            name: "Laptop",
          }),
        );
        return started.passkeyId as string;
      };
      const counted = await forced();
      const passkeyId = await register(counted.id, counted.me);
      expect(failed(await counted.me.call("RemovePasskey", { id: counted.id, passkeyId }), Code.FailedPrecondition).message).toContain("last");
      // With a security key beside it, the passkey may go.
      await withKey(counted.id, counted.me);
      ok(await counted.me.call("RemovePasskey", { id: counted.id, passkeyId }));

      const notCounted = await forced({ multiFactors: { set: { types: [] } } });
      ok(await notCounted.me.call("RemovePasskey", { id: notCounted.id, passkeyId: await register(notCounted.id, notCounted.me) }));
    });
  });
});
