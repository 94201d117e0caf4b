import { createPublicKey, generateKeyPairSync } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, DAY_MS, expectNothingSecret, humanUser, ok, Users, type Msg } from "./helpers.js";
import { gitlabIdp, linkAccount } from "./idp-links.js";
import { totpCode, wrongTotpCode } from "./totp.js";

/** A short token per protocol that usernames carry, so that names never contain each other. */
const TOKEN: Record<Protocol, string> = { grpc: "ga", "grpc-web": "gw", connect: "cn", "connect-h2": "ch", rest: "rs" };
const TOKENS = /mx(ga|gw|cn|ch|rs)/gi;

/** bcrypt ($2b$, cost 5) of IMPORTED, made with python3-bcrypt 3.2.2. */
const IMPORTED = "Imported#Pass1";
const IMPORTED_HASH = "$2b$05$jg4hAMH0V0vwp48DZ0/LguTixeFfUpeDB3842HzmSgZWtSYKQcsIO";
const PASSWORD = "First#Pass1";
const NEW_PASSWORD = "Second#Pass2";

type Step = { result: CallResult; status: number };

/** Values that differ by nature between runs; compared by shape elsewhere. */
const MASKED = ["changeDate", "timestamp", "processedSequence", "passwordChanged", "token", "clientSecret", "keyFile", "publicKey", "secret", "uri", "codes"];

function comparable(result: CallResult, names: Map<string, string>): unknown {
  const swap = (text: string) => {
    let out = text;
    for (const [value, name] of names) out = out.replaceAll(value, name);
    return out.replace(TOKENS, "mx<p>");
  };
  if (!result.ok) return { code: result.code, message: swap(result.message) };
  return JSON.parse(swap(JSON.stringify(result.message, (key, value) => (MASKED.includes(key) ? "*" : value))));
}

describe.each(DATABASE_KINDS)("every PlatformUsers RPC over every protocol (%s)", (kind) => {
  let server: TestServer;
  let org: { id: string; primary: string };
  /** The provider every protocol's person is linked to an account of. */
  let idpId: string;
  /** One expiration for every protocol, so that answers agree. */
  const expiration = new Date(Math.floor(Date.now() / 1000) * 1000 + 30 * DAY_MS).toISOString().replace(".000Z", "Z");

  beforeAll(async () => {
    server = await startTestServer(kind);
    org = await createOrg(server, "Matrix Users");
    idpId = await gitlabIdp(server.baseUrl, server.adminToken, "Matrix GitLab");
  });
  afterAll(() => server?.close());

  async function scenario(protocol: Protocol) {
    const t = TOKEN[protocol];
    const users = new Users(server, protocol);
    const steps: Record<string, Step> = {};
    const run = async (step: string, status: number, method: string, req: JsonObject, token: string | undefined = server.adminToken) => {
      const result = await users.client.call(method, req, token);
      steps[step] = { result, status };
      return result;
    };
    const idOf = (step: string): string => ok(steps[step]!.result).details.id;
    const exp = { expirationDate: expiration };
    const registered = generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey.export({ type: "spki", format: "pem" }).toString();

    await run("createHuman", 201, "CreateUser", {
      user: humanUser(
        `mx${t}human`,
        { phone: { number: "+41791234567", isVerified: true }, password: PASSWORD },
        { nickName: "nick", preferredLanguage: "de-CH", gender: "GENDER_DIVERSE" },
      ),
    });
    await run("createMachine", 201, "CreateUser", {
      user: { username: `mx${t}svc`, machine: { name: "Matrix Service", description: "runs", accessTokenType: "ACCESS_TOKEN_TYPE_JWT" } },
    });
    await run("createImported", 201, "CreateUser", { user: humanUser(`mx${t}imported`, { hashedPassword: IMPORTED_HASH, passwordChangeRequired: true }) });
    await run("createInOrg", 201, "CreateUser", { user: { username: `mx${t}inorg`, machine: { name: "In Org" } }, ctx: { orgId: org.id } });
    const [human, machine, imported, inOrg] = ["createHuman", "createMachine", "createImported", "createInOrg"].map(idOf) as [string, string, string, string];
    await run("createDuplicate", 409, "CreateUser", { user: humanUser(`MX${t.toUpperCase()}HUMAN`) });
    await run("createInvalid", 400, "CreateUser", { user: humanUser(`mx${t} space`) });
    await run("createWeak", 400, "CreateUser", { user: humanUser(`mx${t}weak`, { password: "weak" }) });
    await run("createBadHash", 400, "CreateUser", { user: humanUser(`mx${t}badhash`, { hashedPassword: "$1$saltsalt$qjYmYi6M3Gvq1kPEeMWZs." }) });
    await run("createInMissingOrg", 404, "CreateUser", { user: humanUser(`mx${t}noorg`), ctx: { orgId: "no-such-org" } });

    await run("get", 200, "GetUser", { id: human });
    await run("getMachine", 200, "GetUser", { id: machine });
    await run("getImported", 200, "GetUser", { id: imported });
    await run("getInOrg", 200, "GetUser", { id: inOrg });
    await run("getMissing", 404, "GetUser", { id: "no-such-user" });
    await run("getWrongOrgCtx", 404, "GetUser", { id: human, ctx: { orgId: org.id } });
    await run("search", 200, "SearchUsers", {
      filters: [{ inIds: { ids: [human, machine, imported, inOrg] } }],
      sortingColumn: "USER_FIELD_NAME_USERNAME",
      query: { asc: true },
    });
    await run("searchLoginName", 200, "SearchUsers", {
      filters: [{ loginName: { value: `MX${t.toUpperCase()}HUMAN@DEFAULT.LOCALHOST`, method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }],
    });
    await run("searchOrgCtx", 200, "SearchUsers", {
      ctx: { orgId: org.id },
      filters: [{ username: { value: `mx${t}`, method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
    });

    await run("patch", 200, "PatchUser", {
      id: human,
      user: { human: { nickName: "nick2", removePhone: true, email: { address: `mx${t}new@mail.example`, isVerified: true } } },
    });
    await run("patchSame", 200, "PatchUser", { id: human, user: { human: { nickName: "nick2", removePhone: true } } });
    await run("patchNothing", 200, "PatchUser", { id: human, user: {} });
    await run("patchKind", 400, "PatchUser", { id: machine, user: { human: { nickName: "x" } } });
    await run("patchKindMachine", 400, "PatchUser", { id: human, user: { machine: { name: "x" } } });
    await run("patchTaken", 409, "PatchUser", { id: human, user: { username: `MX${t.toUpperCase()}SVC` } });
    await run("patchOwnCase", 200, "PatchUser", { id: human, user: { username: `mx${t}Human` } });
    await run("patchMachine", 200, "PatchUser", { id: machine, user: { machine: { description: "runs often", accessTokenType: "ACCESS_TOKEN_TYPE_BEARER" } } });
    await run("patchMissing", 404, "PatchUser", { id: "no-such-user", user: { username: `mx${t}ghost` } });
    await run("afterPatch", 200, "GetUser", { id: human });
    await run("afterPatchMachine", 200, "GetUser", { id: machine });

    await run("setPassword", 200, "SetPassword", { id: human, password: { newPassword: NEW_PASSWORD, changeRequired: true } });
    await run("setPasswordCurrent", 200, "SetPassword", { id: human, password: { newPassword: PASSWORD, currentPassword: NEW_PASSWORD } });
    await run("setPasswordWrong", 400, "SetPassword", { id: human, password: { newPassword: NEW_PASSWORD, currentPassword: NEW_PASSWORD } });
    await run("setPasswordImported", 200, "SetPassword", { id: imported, password: { newPassword: NEW_PASSWORD, currentPassword: IMPORTED } });
    await run("setPasswordMachine", 400, "SetPassword", { id: machine, password: { newPassword: NEW_PASSWORD } });
    await run("setPasswordMissing", 404, "SetPassword", { id: "no-such-user", password: { newPassword: NEW_PASSWORD } });
    await run("afterPassword", 200, "GetUser", { id: human });
    await run("afterPasswordImported", 200, "GetUser", { id: imported });

    await run("lock", 200, "LockUser", { id: imported });
    await run("lockAgain", 400, "LockUser", { id: imported });
    await run("reactivateLocked", 400, "ReactivateUser", { id: imported });
    await run("unlock", 200, "UnlockUser", { id: imported });
    await run("unlockAgain", 400, "UnlockUser", { id: imported });
    await run("deactivate", 200, "DeactivateUser", { id: imported });
    await run("lockInactive", 400, "LockUser", { id: imported });
    await run("deactivateAgain", 400, "DeactivateUser", { id: imported });
    await run("afterDeactivate", 200, "GetUser", { id: imported });
    await run("reactivate", 200, "ReactivateUser", { id: imported });
    await run("reactivateAgain", 400, "ReactivateUser", { id: imported });
    await run("lockMissing", 404, "LockUser", { id: "no-such-user" });

    await run("addPat", 201, "AddPersonalAccessToken", { id: machine, pat: exp });
    await run("addPatHuman", 201, "AddPersonalAccessToken", { id: human, pat: exp });
    await run("addPatPast", 400, "AddPersonalAccessToken", { id: machine, pat: { expirationDate: "2001-01-01T00:00:00Z" } });
    await run("addPatMissing", 404, "AddPersonalAccessToken", { id: "no-such-user", pat: exp });
    const pat = ok(steps.addPat!.result) as { token: string; details: { id: string } };
    const patId = pat.details.id;
    const humanPatId = idOf("addPatHuman");
    await run("searchPats", 200, "SearchPersonalAccessTokens", { id: machine });
    await run("patWorks", 200, "GetUser", { id: machine }, pat.token);
    await run("patOther", 403, "GetUser", { id: human }, pat.token);
    await run("deletePatWrongUser", 404, "DeletePersonalAccessToken", { id: human, patId });
    await run("deletePat", 200, "DeletePersonalAccessToken", { id: machine, patId });
    await run("patGone", 401, "GetUser", { id: machine }, pat.token);
    await run("deletePatAgain", 404, "DeletePersonalAccessToken", { id: machine, patId });
    await run("searchPatsAfter", 200, "SearchPersonalAccessTokens", { id: machine });

    await run("addKeyRsa", 201, "AddKey", { id: machine, key: { generate: "KEY_TYPE_RSA", ...exp } });
    await run("addKeyEc", 201, "AddKey", { id: machine, key: { generate: "KEY_TYPE_EC", ...exp } });
    await run("addKeyPublic", 201, "AddKey", { id: machine, key: { publicKey: registered, ...exp } });
    await run("addKeyHuman", 400, "AddKey", { id: human, key: { generate: "KEY_TYPE_EC", ...exp } });
    await run("addKeyGarbage", 400, "AddKey", { id: machine, key: { publicKey: "not a key", ...exp } });
    const [rsaKey, ecKey, publicKey] = ["addKeyRsa", "addKeyEc", "addKeyPublic"].map(idOf) as [string, string, string];
    await run("searchKeys", 200, "SearchKeys", { id: machine, query: { asc: true } });
    await run("deleteKey", 200, "DeleteKey", { id: machine, keyId: ecKey });
    await run("deleteKeyAgain", 404, "DeleteKey", { id: machine, keyId: ecKey });
    await run("searchKeysAfter", 200, "SearchKeys", { id: machine, query: { asc: true } });

    await run("generateSecret", 200, "GenerateSecret", { id: machine });
    await run("afterSecret", 200, "GetUser", { id: machine });
    await run("removeSecret", 200, "RemoveSecret", { id: machine });
    await run("removeSecretAgain", 400, "RemoveSecret", { id: machine });
    await run("generateSecretHuman", 400, "GenerateSecret", { id: human });

    // An external login makes links (test/oidc/external-github.test.ts); an id with characters a path must escape.
    const externalUserId = `mx${t}|ext/1`;
    await linkAccount(server, server.instanceId, human, { idpId, externalUserId, username: `mx${t}ext`, email: `mx${t}ext@mail.example` });
    await run("listLinks", 200, "ListIDPLinks", { id: human, query: { limit: 10 } });
    await run("listLinksNone", 200, "ListIDPLinks", { id: machine });
    await run("listLinksMissing", 404, "ListIDPLinks", { id: "no-such-user" });
    await run("deleteLinkOtherIdp", 404, "DeleteIDPLink", { id: human, idpId: "no-such-idp", externalUserId });
    await run("deleteLinkOtherUser", 404, "DeleteIDPLink", { id: imported, idpId, externalUserId });
    await run("deleteLink", 200, "DeleteIDPLink", { id: human, idpId, externalUserId });
    await run("deleteLinkAgain", 404, "DeleteIDPLink", { id: human, idpId, externalUserId });
    await run("listLinksAfter", 200, "ListIDPLinks", { id: human });
    await run("deleteLinkLong", 400, "DeleteIDPLink", { id: human, idpId, externalUserId: "x".repeat(1001) });

    // Second factors; the TOTP codes are computed from the answered secret, as an authenticator app does.
    await run("addTotp", 200, "AddTOTP", { id: human });
    const { secret } = ok(steps.addTotp!.result);
    await run("verifyTotpWrong", 400, "VerifyTOTP", { id: human, verification: { code: wrongTotpCode(secret) } });
    await run("verifyTotp", 200, "VerifyTOTP", { id: human, verification: { code: totpCode(secret) } });
    await run("addTotpAgain", 400, "AddTOTP", { id: human });
    await run("addOtpEmail", 200, "AddOTPEmail", { id: human });
    await run("addOtpEmailAgain", 409, "AddOTPEmail", { id: human });
    await run("addOtpSmsNoPhone", 400, "AddOTPSMS", { id: human });
    await run("generateRecoveryCodes", 200, "GenerateRecoveryCodes", { id: human });
    await run("listAuthMethods", 200, "ListAuthMethods", { id: human });
    await run("listAuthMethodsMachine", 200, "ListAuthMethods", { id: machine });
    await run("addTotpMachine", 400, "AddTOTP", { id: machine });
    await run("removeTotp", 200, "RemoveTOTP", { id: human });
    await run("removeTotpAgain", 404, "RemoveTOTP", { id: human });
    await run("removeOtpEmail", 200, "RemoveOTPEmail", { id: human });
    await run("removeOtpSms", 404, "RemoveOTPSMS", { id: human });
    await run("removeRecoveryCodes", 200, "RemoveRecoveryCodes", { id: human });
    await run("removeRecoveryCodesAgain", 404, "RemoveRecoveryCodes", { id: human });
    await run("listAuthMethodsAfter", 200, "ListAuthMethods", { id: human });
    await run("listAuthMethodsMissing", 404, "ListAuthMethods", { id: "no-such-user" });

    await run("deleteUser", 200, "DeleteUser", { id: machine });
    await run("getDeleted", 404, "GetUser", { id: machine });
    await run("deleteAgain", 404, "DeleteUser", { id: machine });
    await run("searchPatsDeleted", 404, "SearchPersonalAccessTokens", { id: machine });
    await run("searchKeysDeleted", 404, "SearchKeys", { id: machine });
    await run("recreate", 201, "CreateUser", { user: { username: `mx${t}SVC`, machine: { name: "again" } } });

    await run("invalidId", 400, "GetUser", { id: "x".repeat(201) });
    await run("unauthenticated", 401, "GetUser", { id: human }, "");
    const ids = {
      human,
      machine,
      imported,
      inOrg,
      patId,
      humanPatId,
      rsaKey,
      ecKey,
      publicKey,
      recreated: idOf("recreate"),
      org: org.id,
      defaultOrg: server.defaultOrgId,
      idp: idpId,
    };
    return { steps, ids, registered };
  }

  it("gives the same results, codes and messages on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));

    const { steps: g, ids, registered } = byProtocol.get("grpc")!;
    const r = (step: string) => g[step]!.result;
    const m = (step: string): Msg => ok(r(step));
    const inDefault = { type: "OWNER_TYPE_ORG", id: server.defaultOrgId };
    const inOrg = { type: "OWNER_TYPE_ORG", id: org.id };

    expect(m("createHuman")).toEqual({ details: { id: ids.human, sequence: "1", changeDate: expect.any(String), resourceOwner: inDefault } });
    expect(m("createInOrg").details).toMatchObject({ id: ids.inOrg, resourceOwner: inOrg });
    expect(m("get")).toEqual({
      user: {
        details: { id: ids.human, sequence: "1", changeDate: m("createHuman").details.changeDate, resourceOwner: inDefault },
        username: "mxgahuman",
        loginName: "mxgahuman@default.localhost",
        state: "USER_STATE_ACTIVE",
        human: {
          profile: {
            givenName: "Given",
            familyName: "Family",
            displayName: "Given Family",
            nickName: "nick",
            preferredLanguage: "de-CH",
            gender: "GENDER_DIVERSE",
          },
          email: { address: "mxgahuman@mail.example" },
          phone: { number: "+41791234567", isVerified: true },
          hasPassword: true,
          passwordChanged: m("createHuman").details.changeDate,
        },
      },
    });
    expect(m("getMachine").user).toEqual({
      details: { id: ids.machine, sequence: "1", changeDate: expect.any(String), resourceOwner: inDefault },
      username: "mxgasvc",
      loginName: "mxgasvc@default.localhost",
      state: "USER_STATE_ACTIVE",
      machine: { name: "Matrix Service", description: "runs", accessTokenType: "ACCESS_TOKEN_TYPE_JWT" },
    });
    expect(m("getImported").user.human).toMatchObject({ hasPassword: true, passwordChangeRequired: true });
    expect(m("getInOrg").user).toMatchObject({ loginName: `mxgainorg@${org.primary}`, details: { resourceOwner: inOrg } });
    for (const step of ["createDuplicate", "patchTaken"]) expect(r(step), step).toMatchObject({ ok: false, code: Code.AlreadyExists });
    for (const step of ["createInvalid", "createWeak", "createBadHash", "setPasswordWrong", "addPatPast", "addKeyGarbage", "invalidId", "deleteLinkLong"]) {
      expect(r(step), step).toMatchObject({ ok: false, code: Code.InvalidArgument });
    }
    for (const step of [
      "getMissing",
      "getWrongOrgCtx",
      "patchMissing",
      "setPasswordMissing",
      "lockMissing",
      "addPatMissing",
      "deletePatWrongUser",
      "deletePatAgain",
      "deleteKeyAgain",
      "getDeleted",
      "deleteAgain",
      "searchPatsDeleted",
      "searchKeysDeleted",
      "createInMissingOrg",
      "listLinksMissing",
      "deleteLinkOtherIdp",
      "deleteLinkOtherUser",
      "deleteLinkAgain",
    ]) {
      expect(r(step), step).toMatchObject({ ok: false, code: Code.NotFound });
    }
    for (const step of [
      "patchKind",
      "patchKindMachine",
      "setPasswordMachine",
      "lockAgain",
      "reactivateLocked",
      "unlockAgain",
      "lockInactive",
      "deactivateAgain",
      "reactivateAgain",
      "addKeyHuman",
      "removeSecretAgain",
      "generateSecretHuman",
    ]) {
      expect(r(step), step).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    }
    expect(r("patOther")).toMatchObject({ ok: false, code: Code.PermissionDenied });
    for (const step of ["patGone", "unauthenticated"]) expect(r(step), step).toMatchObject({ ok: false, code: Code.Unauthenticated });

    expect(m("search").result.map((u: Msg) => u.username)).toEqual(["mxgahuman", "mxgaimported", "mxgainorg", "mxgasvc"]);
    expect(m("search")).toMatchObject({ sortingColumn: "USER_FIELD_NAME_USERNAME", details: { totalResult: "4", endOfList: true } });
    expect(m("search").result[0]).toEqual(m("get").user);
    expect(m("searchLoginName").result.map((u: Msg) => u.details.id)).toEqual([ids.human]);
    expect(m("searchOrgCtx").result.map((u: Msg) => u.details.id)).toEqual([ids.inOrg]);

    // One event for the patch, none for the same patch again or an empty one.
    expect(m("patch").details).toMatchObject({ id: ids.human, sequence: "2" });
    expect(m("patchSame").details).toMatchObject({ id: ids.human, sequence: "2" });
    expect(m("patchNothing").details).toMatchObject({ id: ids.human, sequence: "2" });
    expect(m("patchOwnCase").details).toMatchObject({ sequence: "3" });
    expect(m("afterPatch").user).toMatchObject({ username: "mxgaHuman", loginName: "mxgaHuman@default.localhost", details: { sequence: "3" } });
    expect(m("afterPatch").user.human).toMatchObject({ profile: { nickName: "nick2" }, email: { address: "mxganew@mail.example", isVerified: true } });
    expect(m("afterPatch").user.human.phone).toBeUndefined();
    expect(m("afterPatchMachine").user.machine).toEqual({ name: "Matrix Service", description: "runs often", accessTokenType: "ACCESS_TOKEN_TYPE_BEARER" });

    expect(m("setPassword").details).toMatchObject({ id: ids.human, sequence: "4" });
    expect(m("afterPassword").user.human).toMatchObject({ hasPassword: true, passwordChanged: m("setPasswordCurrent").details.changeDate });
    expect(m("afterPassword").user.human.passwordChangeRequired).toBeUndefined();
    expect(m("afterPasswordImported").user.human.passwordChangeRequired).toBeUndefined();
    expect(m("afterDeactivate").user.state).toBe("USER_STATE_INACTIVE");

    expect(m("addPat")).toEqual({
      details: { id: ids.patId, sequence: "1", changeDate: expect.any(String), resourceOwner: inDefault },
      token: expect.stringMatching(/^\S{16,}$/),
    });
    expect(m("searchPats")).toMatchObject({ details: { totalResult: "1", endOfList: true } });
    expect(m("searchPats").result).toEqual([
      { details: { id: ids.patId, sequence: "1", changeDate: m("addPat").details.changeDate, resourceOwner: inDefault }, expirationDate: expiration },
    ]);
    expect(m("searchPatsAfter").result ?? []).toEqual([]);
    expect(m("patWorks").user.details.id).toBe(ids.machine);

    const keyFile = JSON.parse(m("addKeyRsa").keyFile);
    expect(keyFile).toEqual({ type: "serviceaccount", keyId: ids.rsaKey, key: expect.stringMatching(/^-----BEGIN PRIVATE KEY-----\n/), userId: ids.machine });
    expect(m("addKeyPublic")).toEqual({ details: { id: ids.publicKey, sequence: "1", changeDate: expect.any(String), resourceOwner: inDefault } });
    const keys = m("searchKeys").result as Msg[];
    expect(keys.map((k) => [k.details.id, k.type, k.expirationDate])).toEqual([
      [ids.rsaKey, "KEY_TYPE_RSA", expiration],
      [ids.ecKey, "KEY_TYPE_EC", expiration],
      [ids.publicKey, "KEY_TYPE_EC", expiration],
    ]);
    expect(createPublicKey(keys[2].publicKey).export({ type: "spki", format: "der" })).toEqual(
      createPublicKey(registered).export({ type: "spki", format: "der" }),
    );
    expect((m("searchKeysAfter").result as Msg[]).map((k) => k.details.id)).toEqual([ids.rsaKey, ids.publicKey]);

    expect(m("generateSecret")).toEqual({ details: expect.objectContaining({ id: ids.machine }), clientSecret: expect.stringMatching(/^\S{16,}$/) });
    expect(m("afterSecret").user.machine.hasSecret).toBe(true);
    expectNothingSecret(m("afterSecret"), [m("generateSecret").clientSecret]);
    expect(m("recreate").details.id).not.toBe(ids.machine);

    expect(m("listLinks")).toMatchObject({ details: { totalResult: "1", endOfList: true, appliedLimit: 10 } });
    expect(m("listLinks").result).toEqual([
      {
        idpId: ids.idp,
        idpName: "Matrix GitLab",
        externalUserId: "mxga|ext/1",
        externalUserName: "mxgaext",
        details: { changeDate: expect.any(String), resourceOwner: inDefault },
      },
    ]);
    expect(m("listLinksNone").details).toMatchObject({ endOfList: true });
    expect([m("listLinksNone").details.totalResult, m("listLinksNone").result]).toEqual([undefined, undefined]);
    // The link's creation and its removal are events of the person.
    expect(m("deleteLink").details).toMatchObject({ id: ids.human, sequence: String(Number(m("afterPassword").user.details.sequence) + 2) });
    expect(m("listLinksAfter").result ?? []).toEqual([]);

    // Second factors: the secret and the codes answered once, every change an event of the person.
    const methods = (...types: string[]) => ({ authMethodTypes: types.map((t) => `AUTH_METHOD_TYPE_${t}`) });
    expect(m("addTotp")).toEqual({
      details: expect.objectContaining({ id: ids.human }),
      secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
      uri: expect.stringMatching(/^otpauth:\/\/totp\//),
    });
    expect(r("verifyTotpWrong")).toMatchObject({ ok: false, code: Code.InvalidArgument, message: "the code is not valid" });
    expect(m("verifyTotp").details.sequence).toBe(String(Number(m("addTotp").details.sequence) + 1));
    expect(r("addOtpEmailAgain")).toMatchObject({ ok: false, code: Code.AlreadyExists });
    for (const step of ["addTotpAgain", "addOtpSmsNoPhone", "addTotpMachine"])
      expect(r(step), step).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    for (const step of ["removeTotpAgain", "removeOtpSms", "removeRecoveryCodesAgain", "listAuthMethodsMissing"])
      expect(r(step), step).toMatchObject({ ok: false, code: Code.NotFound });
    expect(m("generateRecoveryCodes").codes).toHaveLength(10);
    expect(m("listAuthMethods")).toEqual(methods("PASSWORD", "TOTP", "OTP_EMAIL", "RECOVERY_CODES"));
    expect(m("listAuthMethodsMachine")).toEqual({});
    expect(m("listAuthMethodsAfter")).toEqual(methods("PASSWORD"));
    expect(m("removeRecoveryCodes").details.sequence).toBe(String(Number(m("addTotp").details.sequence) + 6));
    expectNothingSecret(m("listAuthMethods"), [m("addTotp").secret, ...m("generateRecoveryCodes").codes]);

    // Every protocol agrees with gRPC, up to its own names and ids.
    const names = (x: Record<string, string>) => new Map(Object.entries(x).map(([k, v]) => [v, `<${k}>`]));
    const reference = Object.fromEntries(Object.entries(g).map(([k, v]) => [k, comparable(v.result, names(ids))]));
    for (const [protocol, { steps, ids: own }] of byProtocol) {
      expect(Object.keys(steps)).toEqual(Object.keys(g));
      for (const [step, { result, status }] of Object.entries(steps)) {
        expect(comparable(result, names(own)), `${protocol} ${step}`).toEqual(reference[step]);
        if (protocol === "rest") expect(result.httpStatus, `REST status of ${step}: ${JSON.stringify(result)}`).toBe(status);
      }
    }
  });

  it.each(PROTOCOLS)("PatchUser to the values a user already has is no change: the sequence stays (%s)", async (protocol) => {
    const users = new Users(server, protocol);
    const t = TOKEN[protocol];
    const profile = { givenName: "Ada", familyName: "Lovelace", displayName: "Ada L.", nickName: "ada", preferredLanguage: "en-GB", gender: "GENDER_FEMALE" };
    const email = { address: `noop${t}@mail.example`, isVerified: true };
    const phone = { number: "+441234567890", isVerified: true };
    const human = await users.create({ username: `noop${t}`, human: { profile, email, phone } });
    const before = await users.get(human);
    const same = ok(await users.call("PatchUser", { id: human, user: { username: `noop${t}`, human: { ...profile, email, phone } } }));
    expect(same.details).toMatchObject({ id: human, sequence: before.details.sequence, changeDate: before.details.changeDate });
    expect(await users.get(human)).toEqual(before);

    const bare = await users.create(humanUser(`noopbare${t}`));
    const bareBefore = await users.get(bare);
    expect(ok(await users.call("PatchUser", { id: bare, user: { human: { removePhone: true } } })).details.sequence).toBe(bareBefore.details.sequence);
    expect(await users.get(bare)).toEqual(bareBefore);

    const machine = await users.create({ username: `noopsvc${t}`, machine: { name: "svc", description: "d", accessTokenType: "ACCESS_TOKEN_TYPE_JWT" } });
    const machineBefore = await users.get(machine);
    ok(
      await users.call("PatchUser", {
        id: machine,
        user: { username: `noopsvc${t}`, machine: { name: "svc", description: "d", accessTokenType: "ACCESS_TOKEN_TYPE_JWT" } },
      }),
    );
    expect(await users.get(machine)).toEqual(machineBefore);

    // One real change among unchanged fields: one event, only that field differs.
    const changed = ok(await users.call("PatchUser", { id: human, user: { human: { ...profile, nickName: "countess", email, phone } } }));
    expect(changed.details.sequence).toBe(String(Number(before.details.sequence) + 1));
    const after = await users.get(human);
    expect(after.human).toEqual({ ...before.human, profile: { ...before.human.profile, nickName: "countess" } });
  });
});
