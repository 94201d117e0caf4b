import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { DAY_MS, expectNothingSecret, failed, fromNow, humanUser, ok, uniqueName, Users, type Msg } from "./helpers.js";

const TEN_YEARS_MS = 3650 * DAY_MS;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const der = (key: KeyObject | string) => (typeof key === "string" ? createPublicKey(key) : key).export({ type: "spki", format: "der" });
const pem = (key: KeyObject) => key.export({ type: "spki", format: "pem" }).toString();

describe.each(DATABASE_KINDS)("credentials of users (%s)", (kind) => {
  let server: TestServer;
  let admin: Users;
  beforeAll(async () => {
    server = await startTestServer(kind);
    admin = new Users(server);
  });
  afterAll(() => server?.close());

  const machine = () => admin.create({ username: uniqueName("svc"), machine: { name: "svc" } });
  const human = () => admin.create(humanUser(uniqueName("person"), { password: "Human#Pass1" }));
  const addPat = (id: string, expirationDate = fromNow(DAY_MS)) => admin.call("AddPersonalAccessToken", { id, pat: { expirationDate } });
  const addKey = (id: string, key: Record<string, unknown>, expirationDate = fromNow(DAY_MS)) => admin.call("AddKey", { id, key: { ...key, expirationDate } });

  describe("personal access tokens", () => {
    it("work as bearer tokens at once, for machine and human users, on every protocol", async () => {
      for (const id of [await machine(), await human()]) {
        const { token } = ok(await addPat(id));
        for (const protocol of PROTOCOLS) {
          expect(ok(await new Users(server, protocol, token).call("GetUser", { id })).user.details.id, protocol).toBe(id);
        }
      }
    });

    it("are listed newest first (or ascending), paged, with their expiration and never the token", async () => {
      const id = await machine();
      const made: { id: string; token: string; exp: string }[] = [];
      for (const days of [3, 1, 2]) {
        const exp = new Date(Math.floor(Date.now() / 1000) * 1000 + days * DAY_MS).toISOString().replace(".000Z", "Z");
        const m = ok(await addPat(id, exp));
        made.push({ id: m.details.id, token: m.token, exp });
        await sleep(3);
      }
      expect(new Set(made.map((p) => p.token)).size).toBe(3);
      const search = async (query: Record<string, unknown> = {}) => ok(await admin.call("SearchPersonalAccessTokens", { id, query }));
      const all = await search();
      expect(all.details).toMatchObject({ totalResult: "3", endOfList: true });
      expect(all.result.map((p: Msg) => [p.details.id, p.expirationDate])).toEqual([...made].reverse().map((p) => [p.id, p.exp]));
      expect(all.result[0].details).toMatchObject({ sequence: "1", resourceOwner: { type: "OWNER_TYPE_ORG", id: server.defaultOrgId } });
      expect((await search({ asc: true })).result.map((p: Msg) => p.details.id)).toEqual(made.map((p) => p.id));
      const page = await search({ asc: true, limit: 2, offset: "1" });
      expect(page.result.map((p: Msg) => p.details.id)).toEqual(made.slice(1).map((p) => p.id));
      expect(page.details).toMatchObject({ totalResult: "3", endOfList: true, appliedLimit: 2 });
      const first = await search({ limit: 1 });
      expect(first.details).toMatchObject({ totalResult: "3", appliedLimit: 1 });
      expect(first.details.endOfList ?? false).toBe(false);
      expectNothingSecret(
        all,
        made.map((p) => p.token),
      );
      // Another user's listing is its own.
      expect(ok(await admin.call("SearchPersonalAccessTokens", { id: await machine() })).result ?? []).toEqual([]);
    });

    it("stop working at once when deleted, the user's other tokens keep working", async () => {
      const id = await machine();
      const other = await machine();
      const [one, two] = [ok(await addPat(id)), ok(await addPat(id))];
      for (const protocol of PROTOCOLS) {
        for (const t of [one, two]) ok(await new Users(server, protocol, t.token).call("GetUser", { id }));
      }
      failed(await admin.call("DeletePersonalAccessToken", { id: other, patId: one.details.id }), Code.NotFound);
      ok(await admin.as(one.token).call("GetUser", { id }));
      const deleted = ok(await admin.call("DeletePersonalAccessToken", { id, patId: one.details.id }));
      expect(deleted.details).toMatchObject({ id: one.details.id, resourceOwner: { id: server.defaultOrgId } });
      for (const protocol of PROTOCOLS) {
        expectNothingSecret(failed(await new Users(server, protocol, one.token).call("GetUser", { id }), Code.Unauthenticated), [one.token]);
        ok(await new Users(server, protocol, two.token).call("GetUser", { id }));
      }
      expect(ok(await admin.call("SearchPersonalAccessTokens", { id })).result.map((p: Msg) => p.details.id)).toEqual([two.details.id]);
      failed(await admin.call("DeletePersonalAccessToken", { id, patId: one.details.id }), Code.NotFound);
    });

    it("expire: an expired token is refused, even right after a successful call", async () => {
      const id = await machine();
      const expires = Date.now() + 2000;
      const { token } = ok(await addPat(id, new Date(expires).toISOString()));
      ok(await admin.as(token).call("GetUser", { id }));
      await sleep(expires - Date.now() + 200);
      for (const protocol of ["grpc", "rest"] as const) failed(await new Users(server, protocol, token).call("GetUser", { id }), Code.Unauthenticated);
    });

    it("must expire in the future and within 10 years", async () => {
      const id = await machine();
      for (const protocol of ["grpc", "rest"] as const) {
        const users = new Users(server, protocol);
        const add = (expirationDate?: string) => users.call("AddPersonalAccessToken", { id, pat: expirationDate ? { expirationDate } : {} });
        for (const exp of [undefined, fromNow(-DAY_MS), fromNow(-1000), "1970-01-01T00:00:00Z", fromNow(TEN_YEARS_MS + 5 * DAY_MS), "9999-12-31T23:59:59Z"]) {
          const refused = failed(await add(exp), Code.InvalidArgument);
          if (protocol === "rest") expect((refused as Msg).httpStatus).toBe(400);
        }
        expect(ok(await add(fromNow(TEN_YEARS_MS - DAY_MS))).token).toBeTruthy();
        expect(ok(await add(fromNow(60_000))).token).toBeTruthy();
      }
      expect(ok(await admin.call("SearchPersonalAccessTokens", { id })).details.totalResult).toBe("4");
      failed(await admin.call("AddPersonalAccessToken", { id: "no-such-user", pat: { expirationDate: fromNow(DAY_MS) } }), Code.NotFound);
    });
  });

  describe("keys", () => {
    async function generated(type: "KEY_TYPE_RSA" | "KEY_TYPE_EC") {
      const id = await machine();
      const added = ok(await addKey(id, { generate: type }));
      const file = JSON.parse(added.keyFile);
      const found = ok(await admin.call("SearchKeys", { id })).result as Msg[];
      return { id, added, file, found };
    }

    it.each(["KEY_TYPE_RSA", "KEY_TYPE_EC"] as const)("generate %s: the key file's private key signs what the stored public key verifies", async (type) => {
      const { id, added, file, found } = await generated(type);
      expect(Object.keys(file).sort()).toEqual(["key", "keyId", "type", "userId"]);
      expect(file).toMatchObject({ type: "serviceaccount", keyId: added.details.id, userId: id });
      expect(file.key).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n?$/);
      const privateKey = createPrivateKey({ key: file.key, format: "pem" });
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({ details: { id: added.details.id }, type });
      const publicKey = createPublicKey(found[0].publicKey);
      if (type === "KEY_TYPE_RSA") {
        expect(publicKey.asymmetricKeyType).toBe("rsa");
        expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
      } else {
        expect(publicKey.asymmetricKeyType).toBe("ec");
        expect(publicKey.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
      }
      const data = randomBytes(64);
      const signature = sign("sha256", data, privateKey);
      expect(verify("sha256", data, publicKey, signature)).toBe(true);
      expect(verify("sha256", randomBytes(64), publicKey, signature)).toBe(false);
      expect(der(createPublicKey(privateKey))).toEqual(der(publicKey));
      // The private key is shown once: no read has it.
      const dumps = [found, await admin.get(id), ok(await admin.call("SearchUsers", { filters: [{ inIds: { ids: [id] } }] }))];
      const body = file.key.split("\n").slice(1, 3).join("");
      expectNothingSecret(dumps, [body, "PRIVATE KEY"]);
    });

    it("generates a different pair every time", async () => {
      const id = await machine();
      const files = [];
      for (let i = 0; i < 2; i++) files.push(JSON.parse(ok(await addKey(id, { generate: "KEY_TYPE_EC" })).keyFile));
      expect(files[0].key).not.toBe(files[1].key);
      expect(files[0].keyId).not.toBe(files[1].keyId);
      const found = ok(await admin.call("SearchKeys", { id, query: { asc: true } })).result as Msg[];
      expect(found.map((k) => k.details.id)).toEqual(files.map((f) => f.keyId));
      const data = randomBytes(32);
      const signature = sign("sha256", data, createPrivateKey(files[0].key));
      expect(verify("sha256", data, createPublicKey(found[1].publicKey), signature)).toBe(false);
    });

    const ACCEPTED: [string, () => KeyObject, string][] = [
      ["RSA 2048", () => generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey, "KEY_TYPE_RSA"],
      ["RSA 3072", () => generateKeyPairSync("rsa", { modulusLength: 3072 }).publicKey, "KEY_TYPE_RSA"],
      ["EC P-256", () => generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey, "KEY_TYPE_EC"],
      ["EC P-384", () => generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey, "KEY_TYPE_EC"],
      ["EC P-521", () => generateKeyPairSync("ec", { namedCurve: "P-521" }).publicKey, "KEY_TYPE_EC"],
    ];
    it.each(ACCEPTED)("registers a %s public key, returning no key file", async (_, make, type) => {
      const id = await machine();
      const key = make();
      const added = ok(await addKey(id, { publicKey: pem(key) }));
      expect(added.keyFile ?? "").toBe("");
      const found = ok(await admin.call("SearchKeys", { id })).result as Msg[];
      expect(found.map((k) => [k.details.id, k.type])).toEqual([[added.details.id, type]]);
      expect(der(found[0].publicKey)).toEqual(der(key));
    });

    const REFUSED: [string, () => string][] = [
      ["RSA 1024", () => pem(generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey)],
      ["RSA 2047", () => pem(generateKeyPairSync("rsa", { modulusLength: 2047 }).publicKey)],
      ["EC secp256k1", () => pem(generateKeyPairSync("ec", { namedCurve: "secp256k1" }).publicKey)],
      ["Ed25519", () => pem(generateKeyPairSync("ed25519").publicKey)],
      ["X25519", () => pem(generateKeyPairSync("x25519").publicKey)],
      ["DSA 2048", () => pem(generateKeyPairSync("dsa", { modulusLength: 2048, divisorLength: 256 }).publicKey)],
      ["garbage", () => "garbage"],
      ["a PEM block of garbage", () => "-----BEGIN PUBLIC KEY-----\nZ2FyYmFnZQ==\n-----END PUBLIC KEY-----\n"],
      ["a truncated PEM", () => pem(generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey).slice(0, 80)],
      ["a JWK", () => JSON.stringify(generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" }))],
    ];
    it.each(REFUSED)("refuses to register %s with InvalidArgument", async (_, make) => {
      const id = await machine();
      const key = make();
      const refused = failed(await addKey(id, { publicKey: key }), Code.InvalidArgument);
      if (key.length > 60) expect(refused.message).not.toContain(key.slice(30, 60));
      expect(ok(await admin.call("SearchKeys", { id })).result ?? []).toEqual([]);
    });

    it("refuses a private key offered as the public key to register", async () => {
      // The caller keeps the private key: one sent here has leaked, and must not be taken as a public key.
      const id = await machine();
      for (const pair of [generateKeyPairSync("rsa", { modulusLength: 2048 }), generateKeyPairSync("ec", { namedCurve: "P-256" })]) {
        const privatePem = pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
        failed(await addKey(id, { publicKey: privatePem }), Code.InvalidArgument);
      }
      expect(ok(await admin.call("SearchKeys", { id })).result ?? []).toEqual([]);
    });

    it("belong to machine users only", async () => {
      const id = await human();
      failed(await addKey(id, { generate: "KEY_TYPE_EC" }), Code.FailedPrecondition);
      failed(await addKey(id, { publicKey: pem(generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey) }), Code.FailedPrecondition);
      expect(ok(await admin.call("SearchKeys", { id })).result ?? []).toEqual([]);
      failed(await addKey("no-such-user", { generate: "KEY_TYPE_EC" }), Code.NotFound);
    });

    it("must expire in the future and within 10 years", async () => {
      const id = await machine();
      for (const exp of [fromNow(-1000), "1970-01-01T00:00:00Z", fromNow(TEN_YEARS_MS + 5 * DAY_MS)]) {
        failed(await addKey(id, { generate: "KEY_TYPE_EC" }, exp), Code.InvalidArgument);
        failed(await addKey(id, { publicKey: pem(generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey) }, exp), Code.InvalidArgument);
      }
      failed(await admin.call("AddKey", { id, key: { generate: "KEY_TYPE_EC" } }), Code.InvalidArgument);
      const far = new Date(Math.floor((Date.now() + TEN_YEARS_MS - DAY_MS) / 1000) * 1000).toISOString().replace(".000Z", "Z");
      ok(await addKey(id, { generate: "KEY_TYPE_EC" }, far));
      const found = ok(await admin.call("SearchKeys", { id })).result as Msg[];
      expect(found.map((k) => k.expirationDate)).toEqual([far]);
    });

    it("are deleted one by one, for their own user only", async () => {
      const id = await machine();
      const other = await machine();
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push(ok(await addKey(id, { generate: "KEY_TYPE_EC" })).details.id as string);
      const otherKey = ok(await addKey(other, { generate: "KEY_TYPE_EC" })).details.id as string;
      failed(await admin.call("DeleteKey", { id, keyId: otherKey }), Code.NotFound);
      failed(await admin.call("DeleteKey", { id: other, keyId: keys[0] }), Code.NotFound);
      failed(await admin.call("DeleteKey", { id: "no-such-user", keyId: keys[0] }), Code.NotFound);
      ok(await admin.call("DeleteKey", { id, keyId: keys[1] }));
      failed(await admin.call("DeleteKey", { id, keyId: keys[1] }), Code.NotFound);
      const left = ok(await admin.call("SearchKeys", { id })).result as Msg[];
      expect(left.map((k) => k.details.id)).toEqual([keys[2], keys[0]]);
      expect(ok(await admin.call("SearchKeys", { id: other })).result.map((k: Msg) => k.details.id)).toEqual([otherKey]);
      for (const protocol of ["grpc", "rest"] as const) {
        const page = ok(await new Users(server, protocol).call("SearchKeys", { id, query: { limit: 1, asc: true } }));
        expect(page.result.map((k: Msg) => k.details.id)).toEqual([keys[0]]);
        expect(page.details).toMatchObject({ totalResult: "2", appliedLimit: 1 });
        expect(page.details.endOfList ?? false).toBe(false);
        const last = ok(await new Users(server, protocol).call("SearchKeys", { id, query: { limit: 1, offset: "1", asc: true } }));
        expect(last.result.map((k: Msg) => k.details.id)).toEqual([keys[2]]);
      }
    });
  });

  describe("client secrets", () => {
    it("are generated for machine users, shown once, replaced and removed", async () => {
      const id = await machine();
      const before = await admin.get(id);
      expect(before.machine.hasSecret ?? false).toBe(false);
      failed(await admin.call("RemoveSecret", { id }), Code.FailedPrecondition);
      const first = ok(await admin.call("GenerateSecret", { id }));
      expect(first.clientSecret).toMatch(/^\S{32,}$/);
      expect(first.details).toMatchObject({ id, sequence: String(Number(before.details.sequence) + 1) });
      const afterFirst = await admin.get(id);
      expect(afterFirst.machine.hasSecret).toBe(true);
      const second = ok(await admin.call("GenerateSecret", { id }));
      expect(second.clientSecret).not.toBe(first.clientSecret);
      const reads = [
        await admin.get(id),
        ok(await admin.call("SearchUsers", { filters: [{ inIds: { ids: [id] } }] })),
        ok(await admin.call("SearchPersonalAccessTokens", { id })),
      ];
      expectNothingSecret(reads, [first.clientSecret, second.clientSecret]);
      // A client secret is no bearer token.
      for (const secret of [first.clientSecret, second.clientSecret]) failed(await admin.as(secret).call("GetUser", { id }), Code.Unauthenticated);
      ok(await admin.call("RemoveSecret", { id }));
      expect((await admin.get(id)).machine.hasSecret ?? false).toBe(false);
      const again = failed(await admin.call("RemoveSecret", { id }), Code.FailedPrecondition);
      expectNothingSecret(again, [first.clientSecret, second.clientSecret]);
    });

    it("belong to machine users only", async () => {
      const id = await human();
      const before = await admin.get(id);
      failed(await admin.call("GenerateSecret", { id }), Code.FailedPrecondition);
      failed(await admin.call("RemoveSecret", { id }), Code.FailedPrecondition);
      expect(await admin.get(id)).toEqual(before);
      failed(await admin.call("GenerateSecret", { id: "no-such-user" }), Code.NotFound);
    });
  });

  it("DeleteUser takes every credential with it: tokens, keys, secret, password", async () => {
    const id = await machine();
    const { token } = ok(await addPat(id));
    ok(await addKey(id, { generate: "KEY_TYPE_RSA" }));
    ok(await admin.call("GenerateSecret", { id }));
    const person = await human();
    const personPat = ok(await addPat(person));
    ok(await admin.as(token).call("GetUser", { id }));
    ok(await admin.as(personPat.token).call("GetUser", { id: person }));
    for (const user of [id, person]) ok(await admin.call("DeleteUser", { id: user }));
    failed(await admin.as(token).call("GetUser", { id }), Code.Unauthenticated);
    failed(await admin.as(personPat.token).call("GetUser", { id: person }), Code.Unauthenticated);
    for (const rpc of ["GetUser", "SearchPersonalAccessTokens", "SearchKeys", "GenerateSecret", "RemoveSecret", "DeleteUser"])
      failed(await admin.call(rpc, { id }), Code.NotFound);
    const db = server.service.store.db;
    for (const table of ["personal_access_tokens", "user_keys", "user_secrets", "memberships"] as const) {
      const rows = await db.selectFrom(table).select("user_id").where("user_id", "in", [id, person]).execute();
      expect(rows, table).toEqual([]);
    }
  });
});
