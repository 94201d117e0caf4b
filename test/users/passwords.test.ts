import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, type CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { expectNothingSecret, failed, humanUser, ok, uniqueName, Users } from "./helpers.js";

/**
 * Hashes made with tools independent of the service (python3-argon2 21.1.0, python3-bcrypt
 * 3.2.2, python3-passlib 1.7.4, the argon2 CLI and openssl 3 of Debian 12), pasted here.
 */
const IMPORTED = "Imported#Pass1";
const UNICODE = "Ünïcødé#Pass9😀";
const HASHES: { kind: string; hash: string; password: string }[] = [
  { kind: "argon2id (argon2-cffi)", password: IMPORTED, hash: "$argon2id$v=19$m=4096,t=2,p=1$TAV9revSsBLxFzjQCwTR7g$40ZtwQonc8PCIn/u0pwGeQ" },
  {
    kind: "argon2id, p=2, 32-byte hash (argon2 CLI)",
    password: IMPORTED,
    hash: "$argon2id$v=19$m=4096,t=2,p=2$c29tZXNhbHRzYWx0$+NjTuY4EJk6eHZf0XCE9WECeJQFuoIHRMEJcBdeQJg0",
  },
  {
    kind: "argon2id of a non-ASCII password (passlib)",
    password: UNICODE,
    hash: "$argon2id$v=19$m=4096,t=2,p=1$vve+N+Zcy5nTei8FYGyN0Q$2a2hQ0iS35oig4xpch7YTw",
  },
  { kind: "argon2i (argon2-cffi)", password: IMPORTED, hash: "$argon2i$v=19$m=4096,t=2,p=1$yLuWr1ULhuuEdkPUJiQzZw$TRgkBsaaUG35xqOwjA7seA" },
  { kind: "bcrypt $2a$", password: IMPORTED, hash: "$2a$05$9sWCQmqoCCVQx7GGihvjCODXTmAfKGGT6K6hrRU8umXSFkbI/7Lm." },
  { kind: "bcrypt $2b$", password: IMPORTED, hash: "$2b$05$jg4hAMH0V0vwp48DZ0/LguTixeFfUpeDB3842HzmSgZWtSYKQcsIO" },
  { kind: "bcrypt $2y$ (passlib)", password: IMPORTED, hash: "$2y$05$NSsIBj6ld0VCoVvXz7Rc2us7pY8vTMUKkS7dJcP14r2FA.xowXj1a" },
  { kind: "bcrypt of a non-ASCII password", password: UNICODE, hash: "$2b$04$Kg2WU9zHdX0BygrhWXByRe0pDNjT5oYOAfwQ1BuERgbriaZkgd9Dm" },
  {
    kind: "scrypt ln=10 r=8 p=1 (passlib)",
    password: IMPORTED,
    hash: "$scrypt$ln=10,r=8,p=1$15qTspaydm5tTYmREiJEiA$pM3r43gixyHU6mfsi4g1MOS2a49Hs+ZEBCJyrKoIIK4",
  },
  {
    kind: "scrypt ln=4 r=8 p=2 of a non-ASCII password (passlib)",
    password: UNICODE,
    hash: "$scrypt$ln=4,r=8,p=2$be1dq/Wes9Y653zPWQtBSA$dKxX1IyLPmESHSyJFS2KMA1v8eLjzZjepY6oT05p5P0",
  },
];

const A2ID = HASHES[0]!.hash;
const UNSUPPORTED: [string, string][] = [
  ["md5-crypt (openssl passwd -1)", "$1$saltsalt$BI3TqeKpezezTFwYXCLCx1"],
  ["sha512-crypt (openssl passwd -6)", "$6$saltsaltsalt$u3U8CWQNq59uazUwF/2Op64rpRLL7U.4PqUrRBjY65C4ojSSkrdYlpEB4tkBS2I9T1C5ExGJH9OgZbwvO7Cev."],
  ["pbkdf2-sha256 (passlib)", "$pbkdf2-sha256$1000$lVKqFQLAOGfsHSOkdI4xJg$ilbFChMtsKO42HDaMt51ZpDtJX2rGNW9fnF5m6dnu94"],
  ["argon2d (argon2-cffi)", "$argon2d$v=19$m=4096,t=2,p=1$R9g+nd2v/weLXrdX1TSQlA$NwXsAe5ygaop4LWeGKfVag"],
  ["argon2id of version 16", A2ID.replace("v=19", "v=16")],
  ["argon2id without its hash", A2ID.slice(0, A2ID.lastIndexOf("$"))],
  ["argon2id without parameters", "$argon2id$v=19$TAV9revSsBLxFzjQCwTR7g$40ZtwQonc8PCIn/u0pwGeQ"],
  ["argon2id with salt not in base64", A2ID.replace("TAV9revSsBLxFzjQCwTR7g", "TAV9rev!sBLxFzjQCwTR7g")],
  ["argon2id with t=0", A2ID.replace("t=2", "t=0")],
  ["bcrypt $2x$", "$2x$05$jg4hAMH0V0vwp48DZ0/LguTixeFfUpeDB3842HzmSgZWtSYKQcsIO"],
  ["bcrypt one character short", "$2b$05$jg4hAMH0V0vwp48DZ0/LguTixeFfUpeDB3842HzmSgZWtSYKQcsI"],
  ["bcrypt with cost 03", "$2b$03$jg4hAMH0V0vwp48DZ0/LguTixeFfUpeDB3842HzmSgZWtSYKQcsIO"],
  ["bcrypt with a character outside its alphabet", "$2b$05$jg4hAMH0V0vwp48DZ0/LguTixeFfUpeDB3842HzmSgZWtSYKQc!IO"],
  ["scrypt without parameters", "$scrypt$15qTspaydm5tTYmREiJEiA$pM3r43gixyHU6mfsi4g1MOS2a49Hs+ZEBCJyrKoIIK4"],
  ["scrypt with hash not in base64", "$scrypt$ln=10,r=8,p=1$15qTspaydm5tTYmREiJEiA$pM3r43gixyHU6mfsi4g1MOS2a49Hs%ZEBCJyrKoIIK4"],
  ["scrypt with r=0", "$scrypt$ln=10,r=0,p=1$15qTspaydm5tTYmREiJEiA$pM3r43gixyHU6mfsi4g1MOS2a49Hs+ZEBCJyrKoIIK4"],
  ["a password in clear text", IMPORTED],
  ["whitespace around a valid hash", ` ${A2ID}`],
];

/** The rules of the default policy and how an error message may name them. */
const RULES = {
  length: /at least 8|8 characters|length/i,
  uppercase: /upper/i,
  lowercase: /lower/i,
  number: /number|digit/i,
  symbol: /symbol|special/i,
};
type Rule = keyof typeof RULES;
const POLICY_ROWS: [string, Rule[]][] = [
  ["a", ["length", "uppercase", "number", "symbol"]],
  ["Z", ["length", "lowercase", "number", "symbol"]],
  ["7", ["length", "uppercase", "lowercase", "symbol"]],
  ["#", ["length", "uppercase", "lowercase", "number"]],
  ["abcdefgh", ["uppercase", "number", "symbol"]],
  ["ABCDEFGH", ["lowercase", "number", "symbol"]],
  ["12345678", ["uppercase", "lowercase", "symbol"]],
  ["!@#$%^&*", ["uppercase", "lowercase", "number"]],
  ["Abcdefgh1", ["symbol"]],
  ["ABCDEFG1!", ["lowercase"]],
  ["abcdefg1!", ["uppercase"]],
  ["Abcdefgh!", ["number"]],
  ["Ab1!", ["length"]],
  ["Abcdef1", ["length", "symbol"]],
  // Seven code points, ten UTF-16 units: length counts what users see.
  ["😀😀😀Aa1!", ["length"]],
  ["ÀÉÎÕÜ", ["length", "lowercase", "number", "symbol"]],
];
const ACCEPTED = ["Abcdef1!", "😀😀😀😀Aa1!", "Пароль1!", "ünïcødÉ#9"];

describe.each(DATABASE_KINDS)("passwords (%s)", (kind) => {
  let server: TestServer;
  let admin: Users;
  beforeAll(async () => {
    server = await startTestServer(kind);
    admin = new Users(server);
  });
  afterAll(() => server?.close());

  /** A human with the password, and the token it acts with (no memberships). */
  async function person(password: string | undefined, extra: Record<string, unknown> = {}) {
    const id = await admin.create(humanUser(uniqueName("person"), { ...(password !== undefined && { password }), ...extra }));
    const { token } = await admin.pat(id);
    return { id, token, self: admin.as(token) };
  }

  function expectRules(result: CallResult, unmet: Rule[], password: string) {
    const { message } = failed(result, Code.InvalidArgument);
    for (const rule of Object.keys(RULES) as Rule[]) {
      expect(RULES[rule].test(message), `${JSON.stringify(password)}: "${message}" ${unmet.includes(rule) ? "misses" : "wrongly names"} ${rule}`).toBe(
        unmet.includes(rule),
      );
    }
    // Short ones are common words' letters; the longer ones must not be repeated.
    if ([...password].length >= 5) expect(message).not.toContain(password);
  }

  it.each(PROTOCOLS)("names every unmet rule of the policy, and only those, on CreateUser and SetPassword over %s", async (protocol) => {
    const users = new Users(server, protocol);
    const target = await admin.create(humanUser(uniqueName("policy")));
    for (const [password, unmet] of POLICY_ROWS) {
      expectRules(await users.call("CreateUser", { user: humanUser(uniqueName("weak"), { password }) }), unmet, password);
      expectRules(await users.call("SetPassword", { id: target, password: { newPassword: password } }), unmet, password);
    }
    expect((await admin.get(target)).human.hasPassword).toBeFalsy();
    for (const password of ACCEPTED) {
      const id = await users.create(humanUser(uniqueName("strong"), { password }));
      expect((await admin.get(id)).human.hasPassword, password).toBe(true);
      ok(await users.call("SetPassword", { id: target, password: { newPassword: password } }));
    }
  });

  it.each(HASHES.map((h, i) => [h.kind, h, PROTOCOLS[i % PROTOCOLS.length]!] as const))(
    "imports %s: the hash verifies the password and no other",
    async (_, { hash, password }, protocol) => {
      const users = new Users(server, protocol);
      const id = await users.create(humanUser(uniqueName("imported"), { hashedPassword: hash }));
      const created = await users.get(id);
      expect(created.human).toMatchObject({ hasPassword: true, passwordChanged: created.details.changeDate });
      expectNothingSecret(created, [hash, password]);
      const set = (currentPassword: string, newPassword: string) => users.call("SetPassword", { id, password: { newPassword, currentPassword } });

      for (const wrong of [`${password}x`, password.toLowerCase(), password.slice(0, -1), "Other#Pass1"]) {
        const refused = failed(await set(wrong, "Changed#Pass1"), Code.InvalidArgument);
        expectNothingSecret(refused, [hash, password]);
      }
      ok(await set(password, "Changed#Pass1"));
      failed(await set(password, "Changed#Pass2"), Code.InvalidArgument);
      ok(await set("Changed#Pass1", "Changed#Pass2"));
      expectNothingSecret(await users.get(id), [hash, password, "Changed#Pass1", "Changed#Pass2"]);
    },
  );

  it("imports with password_change_required and shows it", async () => {
    const id = await admin.create(humanUser(uniqueName("mustchange"), { hashedPassword: HASHES[5]!.hash, passwordChangeRequired: true }));
    expect((await admin.get(id)).human).toMatchObject({ hasPassword: true, passwordChangeRequired: true });
    const clear = await admin.create(humanUser(uniqueName("mustchange"), { password: "Clear#Pass1", passwordChangeRequired: true }));
    expect((await admin.get(clear)).human).toMatchObject({ hasPassword: true, passwordChangeRequired: true });
    const none = await admin.get(await admin.create(humanUser(uniqueName("nopassword"))));
    expect(none.human.hasPassword ?? false).toBe(false);
    expect(none.human.passwordChanged).toBeUndefined();
  });

  it.each(UNSUPPORTED)("refuses to import %s with InvalidArgument, without repeating it", async (_, hash) => {
    for (const protocol of ["grpc", "rest"] as const) {
      const username = uniqueName("unsupported");
      const refused = failed(
        await new Users(server, protocol).call("CreateUser", { user: humanUser(username, { hashedPassword: hash }) }),
        Code.InvalidArgument,
      );
      expect(refused.message).not.toContain(hash.trim());
      expect(refused.message.length).toBeGreaterThan(0);
      const found = ok(await admin.call("SearchUsers", { filters: [{ username: { value: username } }] }));
      expect(found.result ?? []).toEqual([]);
    }
  });

  describe("SetPassword by an administrator", () => {
    it("needs no current password, may require a change, and checks a current password when given", async () => {
      const { id } = await person("Admin#Pass0");
      const before = await admin.get(id);
      await new Promise((r) => setTimeout(r, 5));
      const first = ok(await admin.call("SetPassword", { id, password: { newPassword: "Admin#Pass1", changeRequired: true } }));
      const afterFirst = await admin.get(id);
      expect(afterFirst.human).toMatchObject({ hasPassword: true, passwordChangeRequired: true, passwordChanged: first.details.changeDate });
      expect(Date.parse(afterFirst.human.passwordChanged)).toBeGreaterThan(Date.parse(before.human.passwordChanged));
      expect(afterFirst.details.sequence).toBe(String(Number(before.details.sequence) + 1));

      failed(await admin.call("SetPassword", { id, password: { newPassword: "Admin#Pass2", currentPassword: "Admin#Pass0" } }), Code.InvalidArgument);
      expect(await admin.get(id)).toEqual(afterFirst);
      ok(await admin.call("SetPassword", { id, password: { newPassword: "Admin#Pass2", currentPassword: "Admin#Pass1" } }));
      const afterSecond = await admin.get(id);
      expect(afterSecond.human.passwordChangeRequired ?? false).toBe(false);
      ok(await admin.call("SetPassword", { id, password: { newPassword: "Admin#Pass3", currentPassword: "Admin#Pass2", changeRequired: true } }));
      expect((await admin.get(id)).human.passwordChangeRequired).toBe(true);
    });

    it("refuses a current password for a user that has none, and any password for a machine user", async () => {
      const { id } = await person(undefined);
      failed(await admin.call("SetPassword", { id, password: { newPassword: "First#Pass1", currentPassword: "Anything#1" } }), Code.InvalidArgument);
      expect((await admin.get(id)).human.hasPassword ?? false).toBe(false);
      ok(await admin.call("SetPassword", { id, password: { newPassword: "First#Pass1" } }));
      expect((await admin.get(id)).human.hasPassword).toBe(true);
      const machine = await admin.create({ username: uniqueName("svc"), machine: { name: "svc" } });
      failed(await admin.call("SetPassword", { id: machine, password: { newPassword: "First#Pass1" } }), Code.FailedPrecondition);
    });

    it("is open to an ORG_OWNER of the user's organization, not to viewers", async () => {
      const { id } = await person("Owner#Pass0");
      const owner = await server.createUser({ roles: [{ context: "org", contextId: server.defaultOrgId, roles: ["ORG_OWNER"] }] });
      ok(await admin.as(owner.token).call("SetPassword", { id, password: { newPassword: "Owner#Pass1", changeRequired: true } }));
      for (const role of [
        { context: "instance" as const, roles: ["IAM_OWNER_VIEWER"] },
        { context: "org" as const, contextId: server.defaultOrgId, roles: ["ORG_OWNER_VIEWER"] },
      ]) {
        const viewer = await server.createUser({ roles: [role] });
        failed(await admin.as(viewer.token).call("SetPassword", { id, password: { newPassword: "Viewer#Pass1" } }), Code.PermissionDenied);
        failed(
          await admin.as(viewer.token).call("SetPassword", { id, password: { newPassword: "Viewer#Pass1", currentPassword: "Owner#Pass1" } }),
          Code.PermissionDenied,
        );
      }
      ok(await admin.call("SetPassword", { id, password: { newPassword: "Owner#Pass2", currentPassword: "Owner#Pass1" } }));
    });
  });

  describe("SetPassword by the user itself", () => {
    it.each(PROTOCOLS)("needs the current password and may not require a change, over %s", async (protocol) => {
      const { id, token } = await person("Self#Pass0");
      const self = new Users(server, protocol, token);
      const before = await admin.get(id);
      const refused = [
        await self.call("SetPassword", { id, password: { newPassword: "Self#Pass1" } }),
        await self.call("SetPassword", { id, password: { newPassword: "Self#Pass1", currentPassword: "Self#Pass9" } }),
        await self.call("SetPassword", { id, password: { newPassword: "Self#Pass1", currentPassword: "Self#Pass0", changeRequired: true } }),
        await self.call("SetPassword", { id, password: { newPassword: "weak", currentPassword: "Self#Pass0" } }),
      ];
      for (const r of refused) {
        failed(r, Code.InvalidArgument);
        expectNothingSecret(r, ["Self#Pass0", "Self#Pass1", "Self#Pass9"]);
      }
      expect(await admin.get(id)).toEqual(before);
      ok(await self.call("SetPassword", { id, password: { newPassword: "Self#Pass1", currentPassword: "Self#Pass0" } }));
      failed(await self.call("SetPassword", { id, password: { newPassword: "Self#Pass2", currentPassword: "Self#Pass0" } }), Code.InvalidArgument);
      const own = ok(await self.call("GetUser", { id })).user;
      expect(own.human).toMatchObject({ hasPassword: true });
      expect(Date.parse(own.human.passwordChanged)).toBeGreaterThan(Date.parse(before.human.passwordChanged));
    });

    it("clears a required change, and reaches no other user even with that user's password", async () => {
      const me = await person("Mine#Pass0");
      const other = await person("Theirs#Pass0");
      ok(await admin.call("SetPassword", { id: me.id, password: { newPassword: "Mine#Pass1", changeRequired: true } }));
      ok(await me.self.call("SetPassword", { id: me.id, password: { newPassword: "Mine#Pass2", currentPassword: "Mine#Pass1" } }));
      expect((await admin.get(me.id)).human.passwordChangeRequired ?? false).toBe(false);
      const before = await admin.get(other.id);
      for (const password of [{ newPassword: "Theirs#Pass1", currentPassword: "Theirs#Pass0" }, { newPassword: "Theirs#Pass1" }]) {
        failed(await me.self.call("SetPassword", { id: other.id, password }), Code.PermissionDenied);
      }
      failed(await me.self.call("GetUser", { id: other.id }), Code.PermissionDenied);
      expect(await admin.get(other.id)).toEqual(before);
      // Self covers reading itself and its password, nothing else.
      failed(await me.self.call("PatchUser", { id: me.id, user: { human: { nickName: "me" } } }), Code.PermissionDenied);
      failed(
        await me.self.call("AddPersonalAccessToken", { id: me.id, pat: { expirationDate: new Date(Date.now() + 3600_000).toISOString() } }),
        Code.PermissionDenied,
      );
      failed(await me.self.call("SearchUsers", {}), Code.PermissionDenied);
    });
  });

  it("leaves the user as it was when SetPassword is refused, also after checking an imported hash", async () => {
    // A bcrypt hash is re-hashed with Argon2id once a password matched it; a refused call must not do that half.
    for (const { hash, password } of [HASHES[5]!, HASHES[8]!, HASHES[3]!]) {
      const id = await admin.create(humanUser(uniqueName("untouched"), { hashedPassword: hash }));
      const before = await admin.get(id);
      await new Promise((r) => setTimeout(r, 5));
      failed(await admin.call("SetPassword", { id, password: { newPassword: "weak", currentPassword: password } }), Code.InvalidArgument);
      const after = await admin.get(id);
      expect(after.details.sequence, "sequence after a refused SetPassword").toBe(before.details.sequence);
      expect(after.human.passwordChanged, "passwordChanged after a refused SetPassword").toBe(before.human.passwordChanged);
    }
  });

  it.each(PROTOCOLS)("never shows a password, hash or secret in reads, searches or errors, over %s", async (protocol) => {
    const users = new Users(server, protocol);
    const secrets = ["Visible#Pass1", "Visible#Pass2", ...HASHES.map((h) => h.hash), IMPORTED, UNICODE];
    const username = uniqueName("secretive");
    const answers: unknown[] = [];
    const keep = async (r: Promise<CallResult>) => {
      const result = await r;
      answers.push(result);
      return result;
    };
    const id = ok(await keep(users.call("CreateUser", { user: humanUser(username, { password: "Visible#Pass1" }) }))).details.id;
    const imported = ok(await keep(users.call("CreateUser", { user: humanUser(`${username}i`, { hashedPassword: HASHES[6]!.hash }) }))).details.id;
    await keep(users.call("CreateUser", { user: humanUser(username.toUpperCase(), { password: "Visible#Pass2" }) }));
    await keep(users.call("CreateUser", { user: humanUser(`${username}x`, { hashedPassword: HASHES[1]!.hash.replace("v=19", "v=18") }) }));
    await keep(users.call("CreateUser", { user: humanUser(`${username}y`, { password: `${"Visible#Pass1".repeat(20)}` }) }));
    await keep(users.call("CreateUser", { user: humanUser(`${username}z`, { password: "visible#pass" }) }));
    await keep(users.call("SetPassword", { id, password: { newPassword: "Visible#Pass2", currentPassword: "Visible#Pass1" } }));
    await keep(users.call("SetPassword", { id, password: { newPassword: "Visible#Pass1", currentPassword: "Visible#Pass1" } }));
    await keep(users.call("SetPassword", { id: imported, password: { newPassword: "Visible#Pass1", currentPassword: IMPORTED } }));
    await keep(users.call("SetPassword", { id: imported, password: { newPassword: "Visible#Pass2", currentPassword: UNICODE } }));
    await keep(users.call("PatchUser", { id, user: { human: { nickName: "nick" } } }));
    for (const user of [id, imported]) {
      await keep(users.call("GetUser", { id: user }));
      await keep(users.call("SearchPersonalAccessTokens", { id: user }));
    }
    for (const filter of [{ username: { value: username, method: "TEXT_FILTER_METHOD_STARTS_WITH" } }, { type: { type: "USER_TYPE_HUMAN" } }]) {
      const found = ok(await keep(users.call("SearchUsers", { filters: [filter], query: { limit: 1000 } })));
      expect(found.result.length).toBeGreaterThan(0);
    }
    expect(answers.filter((a) => !(a as CallResult).ok)).toHaveLength(6);
    expectNothingSecret(answers, secrets);
    expect(JSON.stringify(answers)).not.toMatch(/"(hash|passwordHash|password|secret)"\s*:/i);
  });
});
