import { generateKeyPairSync } from "node:crypto";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, DAY_MS, fromNow, humanUser, ok, Users, type Msg } from "./helpers.js";

const VIOLATIONS = "type.googleapis.com/buf.validate.Violations";
const s = (n: number, c = "a") => c.repeat(n);
const TEN_YEARS_MS = 3650 * DAY_MS;
const exp = () => ({ expirationDate: fromNow(DAY_MS) });

/** "user.human.profile.given_name", "filters[0].in_ids.ids[3]": protovalidate's field paths. */
function violationPaths(details: JsonValue[] | undefined): string[] {
  const detail = (details ?? []).find((d) => (d as JsonObject)?.["@type"] === VIOLATIONS) as JsonObject | undefined;
  expect(detail, `no ${VIOLATIONS} in ${JSON.stringify(details)}`).toBeDefined();
  const paths = (detail!.violations as JsonObject[]).map((v) =>
    (((v.field as JsonObject | undefined)?.elements ?? []) as JsonObject[])
      .map((e) => `${e.fieldName}${e.index !== undefined ? `[${e.index}]` : ""}`)
      .join("."),
  );
  return [...new Set(paths)].sort();
}

/** 254 characters that are a valid address: a 64-character local part and labels of at most 63. */
const EMAIL_254 = `${s(64, "l")}@${s(63, "b")}.${s(63, "c")}.${s(57, "d")}.com`;
const EMAIL_255 = `${s(64, "l")}@${s(63, "b")}.${s(63, "c")}.${s(58, "d")}.com`;
/** Exactly 35 characters of the BCP 47 pattern. */
const LANGUAGE_35 = "abcdefgh-abcdefgh-abcdefgh-abcdefgh";
/** Policy-conforming passwords of 256 and 257 code points; the astral ones are 508/510 UTF-16 units. */
const PASSWORD_256 = `Aa1!${s(252, "x")}`;
const PASSWORD_256_ASTRAL = `Aa1!${s(252, "😀")}`;
const PASSWORD_257_ASTRAL = `Aa1!${s(253, "😀")}`;

interface Ctx {
  human: string;
  machine: string;
  /** A key and a token of `machine`, for the deletions. */
  patId: string;
  keyId: string;
  rsa1024: string;
  /** A valid public key padded to exactly 8192 characters with text before the PEM block. */
  pem8192: string;
}

interface BadRow {
  rpc: string;
  what: string;
  req: (c: Ctx) => JsonObject;
  /** Violating field paths in buf.validate.Violations; null: refused by the service's own checks, with no violations. */
  fields: string[] | null;
  /** REST cannot express an empty path segment. */
  rest?: false;
}
const bad = (rpc: string, what: string, req: (c: Ctx) => JsonObject, fields: string[] | null, rest?: false): BadRow => ({
  rpc,
  what,
  req,
  fields,
  ...(rest === false && { rest }),
});

/** A valid human, changed by `change`; every invalid creation uses a username starting with "bad". */
const createHuman = (change: (user: Msg) => void) => () => {
  const user: Msg = humanUser(`bad${Math.random().toString(36).slice(2, 8)}`);
  change(user);
  return { user };
};
const createMachine = (machine: JsonObject) => () => ({
  user: { username: `bad${Math.random().toString(36).slice(2, 8)}`, machine: { name: "svc", ...machine } },
});

const CREATE_ROWS: BadRow[] = [
  bad("CreateUser", "no user", () => ({}), ["user"]),
  bad(
    "CreateUser",
    "empty username",
    createHuman((u) => (u.username = "")),
    ["user.username"],
  ),
  bad(
    "CreateUser",
    "201-char username",
    createHuman((u) => (u.username = `bad${s(198)}`)),
    ["user.username"],
  ),
  bad(
    "CreateUser",
    "username with a space",
    createHuman((u) => (u.username = "bad name")),
    ["user.username"],
  ),
  bad(
    "CreateUser",
    "username with a tab",
    createHuman((u) => (u.username = "bad\tname")),
    ["user.username"],
  ),
  bad(
    "CreateUser",
    "username with a newline",
    createHuman((u) => (u.username = "bad\nname")),
    ["user.username"],
  ),
  bad(
    "CreateUser",
    "username with a carriage return",
    createHuman((u) => (u.username = "bad\rname")),
    ["user.username"],
  ),
  bad(
    "CreateUser",
    "username with a form feed",
    createHuman((u) => (u.username = "bad\fname")),
    ["user.username"],
  ),
  bad(
    "CreateUser",
    "username of a space only",
    createHuman((u) => (u.username = " ")),
    ["user.username"],
  ),
  bad("CreateUser", "neither human nor machine", () => ({ user: { username: "badnotype" } }), ["user.type"]),
  bad(
    "CreateUser",
    "human without profile",
    createHuman((u) => delete u.human.profile),
    ["user.human.profile"],
  ),
  bad(
    "CreateUser",
    "human without email",
    createHuman((u) => delete u.human.email),
    ["user.human.email"],
  ),
  bad(
    "CreateUser",
    "empty given name",
    createHuman((u) => (u.human.profile.givenName = "")),
    ["user.human.profile.given_name"],
  ),
  bad(
    "CreateUser",
    "201-char given name",
    createHuman((u) => (u.human.profile.givenName = s(201))),
    ["user.human.profile.given_name"],
  ),
  bad(
    "CreateUser",
    "empty family name",
    createHuman((u) => (u.human.profile.familyName = "")),
    ["user.human.profile.family_name"],
  ),
  bad(
    "CreateUser",
    "201-char family name",
    createHuman((u) => (u.human.profile.familyName = s(201))),
    ["user.human.profile.family_name"],
  ),
  bad(
    "CreateUser",
    "201-char display name",
    createHuman((u) => (u.human.profile.displayName = s(201))),
    ["user.human.profile.display_name"],
  ),
  bad(
    "CreateUser",
    "201-char nick name",
    createHuman((u) => (u.human.profile.nickName = s(201))),
    ["user.human.profile.nick_name"],
  ),
  bad(
    "CreateUser",
    "preferred language of one letter",
    createHuman((u) => (u.human.profile.preferredLanguage = "e")),
    ["user.human.profile.preferred_language"],
  ),
  bad(
    "CreateUser",
    "preferred language with underscore",
    createHuman((u) => (u.human.profile.preferredLanguage = "en_US")),
    ["user.human.profile.preferred_language"],
  ),
  bad(
    "CreateUser",
    "preferred language of 36 chars",
    createHuman((u) => (u.human.profile.preferredLanguage = `${LANGUAGE_35}a`)),
    ["user.human.profile.preferred_language"],
  ),
  bad(
    "CreateUser",
    "preferred language with a 9-letter subtag",
    createHuman((u) => (u.human.profile.preferredLanguage = "en-abcdefghi")),
    ["user.human.profile.preferred_language"],
  ),
  bad(
    "CreateUser",
    "undefined gender 99",
    createHuman((u) => (u.human.profile.gender = 99)),
    ["user.human.profile.gender"],
  ),
  bad(
    "CreateUser",
    "email without @",
    createHuman((u) => (u.human.email.address = "not-an-email")),
    ["user.human.email.address"],
  ),
  bad(
    "CreateUser",
    "empty email",
    createHuman((u) => (u.human.email.address = "")),
    ["user.human.email.address"],
  ),
  bad(
    "CreateUser",
    "255-char email",
    createHuman((u) => (u.human.email.address = EMAIL_255)),
    ["user.human.email.address"],
  ),
  bad(
    "CreateUser",
    "phone without +",
    createHuman((u) => (u.human.phone = { number: "0791234567" })),
    ["user.human.phone.number"],
  ),
  bad(
    "CreateUser",
    "phone starting +0",
    createHuman((u) => (u.human.phone = { number: "+0791234567" })),
    ["user.human.phone.number"],
  ),
  bad(
    "CreateUser",
    "phone of 16 digits",
    createHuman((u) => (u.human.phone = { number: "+1234567890123456" })),
    ["user.human.phone.number"],
  ),
  bad(
    "CreateUser",
    "phone with spaces",
    createHuman((u) => (u.human.phone = { number: "+41 79 123 45 67" })),
    ["user.human.phone.number"],
  ),
  bad(
    "CreateUser",
    "empty phone",
    createHuman((u) => (u.human.phone = { number: "" })),
    ["user.human.phone.number"],
  ),
  bad(
    "CreateUser",
    "empty password",
    createHuman((u) => (u.human.password = "")),
    ["user.human.password"],
  ),
  bad(
    "CreateUser",
    "257-char password",
    createHuman((u) => (u.human.password = `Aa1!${s(253)}`)),
    ["user.human.password"],
  ),
  bad(
    "CreateUser",
    "257-code-point password of emoji",
    createHuman((u) => (u.human.password = PASSWORD_257_ASTRAL)),
    ["user.human.password"],
  ),
  bad(
    "CreateUser",
    "empty hashed password",
    createHuman((u) => (u.human.hashedPassword = "")),
    ["user.human.hashed_password"],
  ),
  bad(
    "CreateUser",
    "513-char hashed password",
    createHuman((u) => (u.human.hashedPassword = `$2b$05$${s(506)}`)),
    ["user.human.hashed_password"],
  ),
  bad(
    "CreateUser",
    "password against the policy",
    createHuman((u) => (u.human.password = "weakweak")),
    null,
  ),
  bad(
    "CreateUser",
    "hashed password of no known kind",
    createHuman((u) => (u.human.hashedPassword = "plaintext")),
    null,
  ),
  bad("CreateUser", "empty machine name", createMachine({ name: "" }), ["user.machine.name"]),
  bad("CreateUser", "201-char machine name", createMachine({ name: s(201) }), ["user.machine.name"]),
  bad("CreateUser", "501-char description", createMachine({ description: s(501) }), ["user.machine.description"]),
  bad("CreateUser", "undefined access token type 99", createMachine({ accessTokenType: 99 }), ["user.machine.access_token_type"]),
  // REST carries ctx in the query string, where an empty message cannot be written.
  bad("CreateUser", "ctx with nothing set", () => ({ ...createMachine({})(), ctx: {} }), ["ctx.type"], false),
];

/** Every RPC that names a user by `id`, with a request that is valid but for it. */
const BY_ID: [string, (c: Ctx) => JsonObject][] = [
  ["GetUser", () => ({})],
  ["DeleteUser", () => ({})],
  ["LockUser", () => ({})],
  ["UnlockUser", () => ({})],
  ["DeactivateUser", () => ({})],
  ["ReactivateUser", () => ({})],
  ["GenerateSecret", () => ({})],
  ["RemoveSecret", () => ({})],
  ["SearchPersonalAccessTokens", () => ({})],
  ["SearchKeys", () => ({})],
  ["PatchUser", () => ({ user: { username: "badpatch" } })],
  ["SetPassword", () => ({ password: { newPassword: "Valid#Pass1" } })],
  ["AddPersonalAccessToken", () => ({ pat: exp() })],
  ["AddKey", () => ({ key: { generate: "KEY_TYPE_EC", ...exp() } })],
  ["DeletePersonalAccessToken", (c) => ({ patId: c.patId })],
  ["DeleteKey", (c) => ({ keyId: c.keyId })],
];
const ID_ROWS: BadRow[] = BY_ID.flatMap(([rpc, rest]) => [
  bad(rpc, "empty id", (c) => ({ id: "", ...rest(c) }), ["id"], false),
  bad(rpc, "201-char id", (c) => ({ id: s(201), ...rest(c) }), ["id"]),
]);

const patchHuman = (human: JsonObject) => (c: Ctx) => ({ id: c.human, user: { human } });
const patchMachine = (machine: JsonObject) => (c: Ctx) => ({ id: c.machine, user: { machine } });
const PATCH_ROWS: BadRow[] = [
  bad("PatchUser", "no user", (c) => ({ id: c.human }), ["user"]),
  bad("PatchUser", "empty username", (c) => ({ id: c.human, user: { username: "" } }), ["user.username"]),
  bad("PatchUser", "201-char username", (c) => ({ id: c.human, user: { username: s(201) } }), ["user.username"]),
  bad("PatchUser", "username with a space", (c) => ({ id: c.human, user: { username: "a b" } }), ["user.username"]),
  bad("PatchUser", "empty given name", patchHuman({ givenName: "" }), ["user.human.given_name"]),
  bad("PatchUser", "201-char family name", patchHuman({ familyName: s(201) }), ["user.human.family_name"]),
  bad("PatchUser", "201-char display name", patchHuman({ displayName: s(201) }), ["user.human.display_name"]),
  bad("PatchUser", "201-char nick name", patchHuman({ nickName: s(201) }), ["user.human.nick_name"]),
  bad("PatchUser", "bad preferred language", patchHuman({ preferredLanguage: "en_US" }), ["user.human.preferred_language"]),
  bad("PatchUser", "undefined gender 99", patchHuman({ gender: 99 }), ["user.human.gender"]),
  bad("PatchUser", "invalid email", patchHuman({ email: { address: "nope" } }), ["user.human.email.address"]),
  bad("PatchUser", "phone not E.164", patchHuman({ phone: { number: "12345" } }), ["user.human.phone.number"]),
  bad("PatchUser", "empty machine name", patchMachine({ name: "" }), ["user.machine.name"]),
  bad("PatchUser", "501-char description", patchMachine({ description: s(501) }), ["user.machine.description"]),
  bad("PatchUser", "undefined access token type 99", patchMachine({ accessTokenType: 99 }), ["user.machine.access_token_type"]),
];

const PASSWORD_ROWS: BadRow[] = [
  bad("SetPassword", "no password", (c) => ({ id: c.human }), ["password"]),
  bad("SetPassword", "empty new password", (c) => ({ id: c.human, password: { newPassword: "" } }), ["password.new_password"]),
  bad("SetPassword", "257-char new password", (c) => ({ id: c.human, password: { newPassword: `Aa1!${s(253)}` } }), ["password.new_password"]),
  bad("SetPassword", "257-char current password", (c) => ({ id: c.human, password: { newPassword: "Valid#Pass1", currentPassword: s(257) } }), [
    "password.current_password",
  ]),
  bad("SetPassword", "new password against the policy", (c) => ({ id: c.human, password: { newPassword: "alllowercase" } }), null),
];

const search = (filters: JsonValue[]) => () => ({ filters });
const SEARCH_ROWS: BadRow[] = [
  bad("SearchUsers", "query.limit 1001", () => ({ query: { limit: 1001 } }), ["query.limit"]),
  bad("SearchUsers", "undefined sortingColumn 99", () => ({ sortingColumn: 99 }), ["sorting_column"]),
  bad("SearchUsers", "201 filters", search(Array.from({ length: 201 }, () => ({ type: { type: "USER_TYPE_HUMAN" } }))), ["filters"]),
  bad("SearchUsers", "filter with nothing set", search([{}]), ["filters[0].filter"]),
  bad("SearchUsers", "1001 ids", search([{ inIds: { ids: Array.from({ length: 1001 }, (_, i) => `id${i}`) } }]), ["filters[0].in_ids.ids"]),
  bad("SearchUsers", "an empty id", search([{ inIds: { ids: ["ok", ""] } }]), ["filters[0].in_ids.ids[1]"]),
  bad("SearchUsers", "a 201-char id", search([{ inIds: { ids: [s(201)] } }]), ["filters[0].in_ids.ids[0]"]),
  bad("SearchUsers", "201-char username filter", search([{ username: { value: s(201) } }]), ["filters[0].username.value"]),
  bad("SearchUsers", "201-char login name filter", search([{ loginName: { value: s(201) } }]), ["filters[0].login_name.value"]),
  bad("SearchUsers", "201-char email filter", search([{ email: { value: s(201) } }]), ["filters[0].email.value"]),
  bad("SearchUsers", "201-char display name filter", search([{ displayName: { value: s(201) } }]), ["filters[0].display_name.value"]),
  bad("SearchUsers", "undefined text method 99", search([{ username: { value: "x", method: 99 } }]), ["filters[0].username.method"]),
  bad("SearchUsers", "empty organization id", search([{ organization: { orgId: "" } }]), ["filters[0].organization.org_id"]),
  bad("SearchUsers", "201-char organization id", search([{ organization: { orgId: s(201) } }]), ["filters[0].organization.org_id"]),
  bad("SearchUsers", "type UNSPECIFIED", search([{ type: { type: "USER_TYPE_UNSPECIFIED" } }]), ["filters[0].type.type"]),
  bad("SearchUsers", "undefined type 99", search([{ type: { type: 99 } }]), ["filters[0].type.type"]),
  bad("SearchUsers", "state UNSPECIFIED", search([{ state: { state: "USER_STATE_UNSPECIFIED" } }]), ["filters[0].state.state"]),
  bad("SearchUsers", "undefined state 99", search([{ state: { state: 99 } }]), ["filters[0].state.state"]),
  bad("SearchUsers", "second filter bad", search([{ type: { type: "USER_TYPE_HUMAN" } }, { username: { value: s(201) } }]), ["filters[1].username.value"]),
  bad("SearchPersonalAccessTokens", "query.limit 1001", (c) => ({ id: c.machine, query: { limit: 1001 } }), ["query.limit"]),
  bad("SearchKeys", "query.limit 1001", (c) => ({ id: c.machine, query: { limit: 1001 } }), ["query.limit"]),
];

const CREDENTIAL_ROWS: BadRow[] = [
  bad("AddPersonalAccessToken", "no pat", (c) => ({ id: c.machine }), ["pat"]),
  bad("AddPersonalAccessToken", "no expiration", (c) => ({ id: c.machine, pat: {} }), ["pat.expiration_date"]),
  bad("AddPersonalAccessToken", "expiration in the past", (c) => ({ id: c.machine, pat: { expirationDate: fromNow(-60_000) } }), null),
  bad("AddPersonalAccessToken", "expiration beyond 10 years", (c) => ({ id: c.machine, pat: { expirationDate: fromNow(TEN_YEARS_MS + 5 * DAY_MS) } }), null),
  bad("AddKey", "no key", (c) => ({ id: c.machine }), ["key"]),
  bad("AddKey", "no source", (c) => ({ id: c.machine, key: exp() }), ["key.source"]),
  bad("AddKey", "generate UNSPECIFIED", (c) => ({ id: c.machine, key: { generate: "KEY_TYPE_UNSPECIFIED", ...exp() } }), ["key.generate"]),
  bad("AddKey", "generate undefined 99", (c) => ({ id: c.machine, key: { generate: 99, ...exp() } }), ["key.generate"]),
  bad("AddKey", "empty public key", (c) => ({ id: c.machine, key: { publicKey: "", ...exp() } }), ["key.public_key"]),
  bad("AddKey", "8193-char public key", (c) => ({ id: c.machine, key: { publicKey: `x${c.pem8192}`, ...exp() } }), ["key.public_key"]),
  bad("AddKey", "no expiration", (c) => ({ id: c.machine, key: { generate: "KEY_TYPE_RSA" } }), ["key.expiration_date"]),
  bad("AddKey", "expiration in the past", (c) => ({ id: c.machine, key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(-60_000) } }), null),
  bad(
    "AddKey",
    "expiration beyond 10 years",
    (c) => ({ id: c.machine, key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(TEN_YEARS_MS + 5 * DAY_MS) } }),
    null,
  ),
  bad("AddKey", "RSA 1024 public key", (c) => ({ id: c.machine, key: { publicKey: c.rsa1024, ...exp() } }), null),
  bad(
    "AddKey",
    "garbage public key",
    (c) => ({ id: c.machine, key: { publicKey: "-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n", ...exp() } }),
    null,
  ),
  bad("DeletePersonalAccessToken", "empty pat id", (c) => ({ id: c.machine, patId: "" }), ["pat_id"], false),
  bad("DeletePersonalAccessToken", "201-char pat id", (c) => ({ id: c.machine, patId: s(201) }), ["pat_id"]),
  bad("DeleteKey", "empty key id", (c) => ({ id: c.machine, keyId: "" }), ["key_id"], false),
  bad("DeleteKey", "201-char key id", (c) => ({ id: c.machine, keyId: s(201) }), ["key_id"]),
];

const BAD_ROWS = [...CREATE_ROWS, ...ID_ROWS, ...PATCH_ROWS, ...PASSWORD_ROWS, ...SEARCH_ROWS, ...CREDENTIAL_ROWS];

/** Boundary values that must pass; each protocol gets its own usernames (`t`). */
interface GoodRow {
  rpc: string;
  what: string;
  req: (c: Ctx, t: string) => JsonObject;
}
const good = (rpc: string, what: string, req: (c: Ctx, t: string) => JsonObject): GoodRow => ({ rpc, what, req });
const GOOD_ROWS: GoodRow[] = [
  good("CreateUser", "200-char username, names and nick name, 254-char email, 35-char language, 15-digit phone", (_, t) => ({
    user: {
      username: `${t}${s(200 - t.length, "u")}`,
      human: {
        profile: {
          givenName: s(200, "g"),
          familyName: s(200, "f"),
          displayName: s(200, "d"),
          nickName: s(200, "n"),
          preferredLanguage: LANGUAGE_35,
          gender: "GENDER_MALE",
        },
        email: { address: EMAIL_254, isVerified: true },
        phone: { number: "+123456789012345" },
        password: PASSWORD_256,
      },
    },
  })),
  good("CreateUser", "unicode username, 2-digit phone, 256-code-point password of emoji", (_, t) => ({
    user: {
      ...humanUser(
        `ünïcødé-名前-${t}`,
        { email: { address: `unicode-${t}@mail.example` }, phone: { number: "+12" }, password: PASSWORD_256_ASTRAL },
        { preferredLanguage: "en" },
      ),
    },
  })),
  good("CreateUser", "1-char names", (_, t) => ({
    user: { username: `one${t}`, human: { profile: { givenName: "g", familyName: "f" }, email: { address: "a@b.example" } } },
  })),
  good("CreateUser", "machine of 200-char name and 500-char description", (_, t) => ({
    user: { username: `svc${t}`, machine: { name: s(200), description: s(500), accessTokenType: "ACCESS_TOKEN_TYPE_JWT" } },
  })),
  good("PatchUser", "200-char username", (c, t) => ({ id: c.human, user: { username: `${t}${s(200 - t.length, "p")}` } })),
  good("SetPassword", "256-char new and current password", (c) => ({ id: c.human, password: { newPassword: PASSWORD_256, currentPassword: PASSWORD_256 } })),
  good("SearchUsers", "limit 1000, 200 filters", () => ({
    query: { limit: 1000 },
    filters: Array.from({ length: 200 }, () => ({ type: { type: "USER_TYPE_HUMAN" } })),
  })),
  good("SearchUsers", "1000 ids, 200-char values", (c) => ({
    filters: <JsonValue[]>[
      { inIds: { ids: [c.human, ...Array.from({ length: 999 }, (_, i) => `${s(190, "i")}${i}`)] } },
      { username: { value: s(200), method: "TEXT_FILTER_METHOD_STARTS_WITH" } },
      { email: { value: s(200), method: "TEXT_FILTER_METHOD_CONTAINS" } },
    ],
  })),
  good("AddPersonalAccessToken", "expiration a day short of 10 years", (c) => ({ id: c.machine, pat: { expirationDate: fromNow(TEN_YEARS_MS - DAY_MS) } })),
  good("AddKey", "expiration a day short of 10 years", (c) => ({
    id: c.machine,
    key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(TEN_YEARS_MS - DAY_MS) },
  })),
  good("AddKey", "public key of exactly 8192 characters", (c) => ({ id: c.machine, key: { publicKey: c.pem8192, ...exp() } })),
];

const TOKEN: Record<Protocol, string> = { grpc: "ga", "grpc-web": "gw", connect: "cn", "connect-h2": "ch", rest: "rs" };

describe.each(DATABASE_KINDS)("PlatformUsers request validation (%s)", (kind) => {
  let server: TestServer;
  let ctx: Ctx;
  const clients = {} as Record<Protocol, Users>;

  beforeAll(async () => {
    server = await startTestServer(kind);
    for (const p of PROTOCOLS) clients[p] = new Users(server, p);
    const admin = clients.grpc;
    const human = await admin.create(humanUser("valhuman", { password: PASSWORD_256 }));
    const machine = await admin.create({ username: "valmachine", machine: { name: "svc" } });
    const pat = await admin.pat(machine);
    const key = ok(await admin.call("AddKey", { id: machine, key: { generate: "KEY_TYPE_EC", ...exp() } })).details.id;
    const pem = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ type: "spki", format: "pem" }).toString();
    const pem8192 = `${s(8192 - pem.length - 1, "c")}\n${pem}`;
    expect([...pem8192].length).toBe(8192);
    const rsa1024 = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ type: "spki", format: "pem" }).toString();
    ctx = { human, machine, patId: pat.id, keyId: key, rsa1024, pem8192 };
  });
  afterAll(() => server?.close());

  it.each(PROTOCOLS)("refuses every invalid request with InvalidArgument over %s, REST with 400 and the violating fields", async (protocol) => {
    const failures: string[] = [];
    for (const row of BAD_ROWS) {
      if (protocol === "rest" && row.rest === false) continue;
      const result: CallResult = await clients[protocol].call(row.rpc, row.req(ctx));
      const label = `${row.rpc} ${row.what}`;
      if (result.ok || result.code !== Code.InvalidArgument) {
        failures.push(`${label}: ${JSON.stringify(result).slice(0, 300)}`);
        continue;
      }
      if (protocol === "rest") {
        expect(result.httpStatus, label).toBe(400);
        if (row.fields) expect(violationPaths(result.details), label).toEqual([...row.fields].sort());
      }
    }
    expect(failures).toEqual([]);
  });

  it("changed nothing with the refused requests", async () => {
    const admin = clients.grpc;
    const created = ok(await admin.call("SearchUsers", { filters: [{ username: { value: "bad", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }] }));
    expect(created.details.totalResult ?? "0").toBe("0");
    const pats = ok(await admin.call("SearchPersonalAccessTokens", { id: ctx.machine }));
    expect(pats.result.map((p: Msg) => p.details.id)).toEqual([ctx.patId]);
    const keys = ok(await admin.call("SearchKeys", { id: ctx.machine }));
    expect(keys.result.map((k: Msg) => k.details.id)).toEqual([ctx.keyId]);
    expect((await admin.get(ctx.human)).details.sequence).toBe("1");
    expect((await admin.get(ctx.machine)).details.sequence).toBe("1");
    // The refusals were of the request, not of the resources: they are all still there.
    for (const rpc of ["GetUser", "SearchKeys"]) ok(await admin.call(rpc, { id: ctx.machine }));
  });

  it("refuses usernames with any whitespace: vertical tab and Unicode spaces too", async () => {
    const accepted: string[] = [];
    const spaces: [string, string][] = [
      ["vertical tab", "\v"],
      ["no-break space", "\u00a0"],
      ["em space", "\u2003"],
      ["ideographic space", "\u3000"],
      ["line separator", "\u2028"],
    ];
    for (const [what, space] of spaces) {
      const created = await clients.grpc.call("CreateUser", { user: { username: `ws${space}name${accepted.length}`, machine: { name: "svc" } } });
      if (created.ok || created.code !== Code.InvalidArgument) accepted.push(`CreateUser with a ${what}: ${JSON.stringify(created).slice(0, 160)}`);
      const patched = await clients.grpc.call("PatchUser", { id: ctx.machine, user: { username: `ws${space}patched` } });
      if (patched.ok || patched.code !== Code.InvalidArgument) accepted.push(`PatchUser with a ${what}: ${JSON.stringify(patched).slice(0, 160)}`);
    }
    expect(accepted).toEqual([]);
  });

  it("refuses a username that ends with a domain of another organization (FailedPrecondition), on create and patch, on every protocol", async () => {
    const other = await createOrg(server, "Other Domain Owner");
    for (const protocol of PROTOCOLS) {
      const name = `val-${protocol}@${other.primary}`;
      const created = await clients[protocol].call("CreateUser", { user: { username: name, machine: { name: "svc" } } });
      expect(created, `${protocol} create`).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect((created as { message: string }).message).toContain(other.primary);
      if (protocol === "rest") expect(created).toMatchObject({ httpStatus: 400 });
      const patched = await clients[protocol].call("PatchUser", { id: ctx.machine, user: { username: name.toUpperCase() } });
      expect(patched, `${protocol} patch`).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    }
    // The organization's own domain is its users' to use, and other domains are just text.
    const own = await new Users(server).create({ username: `val-own@${other.primary}`, machine: { name: "svc" } }, { orgId: other.id });
    expect((await clients.grpc.get(own)).username).toBe(`val-own@${other.primary}`);
    expect(ok(await clients.grpc.call("PatchUser", { id: ctx.machine, user: { username: "valmachine@mail.example" } }))).toBeTruthy();
    ok(await clients.grpc.call("PatchUser", { id: ctx.machine, user: { username: "valmachine" } }));
  });

  it.each(PROTOCOLS)("accepts the boundary values over %s", async (protocol) => {
    const failures: string[] = [];
    for (const row of GOOD_ROWS) {
      const result = await clients[protocol].call(row.rpc, row.req(ctx, TOKEN[protocol]));
      if (!result.ok) failures.push(`${row.rpc} ${row.what}: ${JSON.stringify(result).slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
  });

  it("stores the boundary values as given", async () => {
    const admin = clients.grpc;
    const found = ok(await admin.call("SearchUsers", { filters: [{ email: { value: EMAIL_254.slice(0, 200), method: "TEXT_FILTER_METHOD_STARTS_WITH" } }] }))
      .result as Msg[];
    expect(found).toHaveLength(PROTOCOLS.length);
    for (const u of found) {
      expect(u.human.profile).toEqual({
        givenName: s(200, "g"),
        familyName: s(200, "f"),
        displayName: s(200, "d"),
        nickName: s(200, "n"),
        preferredLanguage: LANGUAGE_35,
        gender: "GENDER_MALE",
      });
      expect(u.human.phone).toEqual({ number: "+123456789012345" });
      expect(u.username).toHaveLength(200);
      expect(u.human.hasPassword).toBe(true);
    }
    const unicode = ok(await admin.call("SearchUsers", { filters: [{ username: { value: "ünïcødé-名前-ga" } }] })).result as Msg[];
    expect(unicode.map((u) => u.loginName)).toEqual(["ünïcødé-名前-ga@default.localhost"]);
  });
});
