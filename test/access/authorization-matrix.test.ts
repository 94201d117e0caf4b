import type { DescService, JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformIdentityProviders } from "../../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformNotifications } from "../../gen/platform/resources/notification/v3alpha/notification_service_pb.js";
import { PlatformAuthRequests } from "../../gen/platform/resources/oidc/v3alpha/auth_request_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { PlatformIDPIntents } from "../../gen/platform/resources/idp_intent/v3alpha/idp_intent_service_pb.js";
import { PlatformApps } from "../../gen/platform/resources/app/v3alpha/app_service_pb.js";
import { PlatformProjects } from "../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TestDnsServer } from "../support/dns-server.js";
import { gitlab } from "../idps/helpers.js";
import { linkAccount } from "../users/idp-links.js";
import { totpCode } from "../users/totp.js";
import { SoftwareAuthenticator } from "../support/webauthn-authenticator.js";
import { oidc } from "../apps/helpers.js";

/**
 * The authorization matrix: every RPC of PlatformOrganizations, PlatformDomains,
 * PlatformActions, PlatformUsers, PlatformMemberships, PlatformSMTPProviders,
 * PlatformSMSProviders, PlatformNotifications, PlatformAuthRequests, PlatformSessions and
 * PlatformIDPIntents for every kind of caller
 * (PlatformInstances, whose callers span instances, has its table in
 * test/instances/access.test.ts). The expected outcomes are written here by hand
 * from the role table of the issue, not computed from src/domain/authz or method-rules:
 *
 *   SYSTEM_OWNER      everything, everywhere
 *   IAM_OWNER         everything in its instance (instance.*, org.*, org.domain.*, actions,
 *                     instance.notification.*, …)
 *   IAM_OWNER_VIEWER  the *.read permissions of IAM_OWNER, in its instance
 *   ORG_OWNER         in its organization: org.read, org.write (no org.delete, no instance.*),
 *                     org.domain.read/write, user.*, member.*, idp.*
 *   ORG_OWNER_VIEWER  the reads of ORG_OWNER, in its organization
 *   plain user        nothing, except GetUser, ListAuthMethods, SetPassword (with its current
 *                     password) and its second factors on itself; its own sessions (read,
 *                     search, delete), and any session whose token it gives
 *
 * A request is checked in the organization its ctx selects, else in the one owning the
 * resource it names, else in the instance. Searches show only what the caller may read and
 * are PermissionDenied when it may read nothing. A resource that does not exist (or lies
 * outside the ctx organization) is NotFound to who holds the permission somewhere in the
 * instance, PermissionDenied to anyone else.
 *
 * Fixture: organizations A and B, made by the admin through the API, each with its generated
 * primary domain and one added domain. The ORG_OWNER and ORG_OWNER_VIEWER hold their
 * membership in A; "in A" columns name A's resources (or ctx A), "in B" columns B's.
 * Everybody else acts on A, or on a fresh organization where the call destroys it.
 *
 * Users and memberships: every caller is a user of the instance's default organization (the
 * plain user a person with a password, the others service accounts), so "itself" lies outside
 * A and B. Creations without ctx (CreateUser) act in the default organization, where only
 * instance roles hold. Users a row acts on are made fresh in the organization acted in by the
 * admin; memberships likewise. Membership rows name the context by ctx (absent: the instance).
 */

const COLUMNS = ["none", "system", "iamOwner", "iamViewer", "ownerInA", "ownerInB", "viewerInA", "viewerInB", "plain"] as const;
type Column = (typeof COLUMNS)[number];

type Outcome = "ok" | "denied" | "unauth" | "notfound" | "failed" | "invalid";
/**
 * ok: success; denied: PermissionDenied (403); unauth: Unauthenticated (401); notfound: NotFound (404);
 * failed: FailedPrecondition (400); invalid: InvalidArgument (400).
 */
const [OK, D, U, NF, FP, IA] = ["ok", "denied", "unauth", "notfound", "failed", "invalid"] as const satisfies Outcome[];

/** What a successful search returns: every organization's ("all"), exactly A's, nothing, or the system's ("sys"). */
type Visible = "all" | "A" | "none" | "sys" | "-";

interface Org {
  id: string;
  primary: string;
}

interface Scene {
  column: Column;
  protocol: Protocol;
  /** The organization the caller acts in: A, B, or a fresh one. */
  org: Org;
  /** The other one of A and B. */
  other: Org;
  a: Org;
  b: Org;
  defaultOrgId: string;
  targetId: string;
  instanceId: string;
  /** The caller's own user id (for "none": the plain user's). */
  self: string;
  /** The plain user: a person of the default organization with the password PLAIN_PASSWORD. */
  plainId: string;
  baseUrl: string;
  /** What a row's request remembers for its check (a generated name, a value before). */
  memo: Record<string, string>;
  admin(service: DescService, rpc: string, req: JsonObject): Promise<CallResult>;
  unique(prefix: string): string;
  /** A delivered event delivery to the fixture target; returns its id. */
  deliveredDelivery(): Promise<string>;
  /** Links a person to a new account at the fixture identity provider, as an external login does. */
  linkAccount(userId: string): Promise<{ idpId: string; externalUserId: string }>;
  /** Publishes TXT records at the test DNS server the service asks (PLATFORM_DNS_SERVERS). */
  publishTxt(name: string, records: string[]): void;
}

interface Row {
  service: DescService;
  rpc: string;
  what: string;
  /** One outcome per column, in the order of COLUMNS. */
  expect: readonly Outcome[];
  /** For searches: what an "ok" answer contains, per column. */
  visible?: readonly Visible[];
  /** Callers without membership in A act on a fresh organization (the call destroys it). */
  fresh?: boolean;
  request(s: Scene): JsonObject | Promise<JsonObject>;
  /** Runs after every call, whatever its outcome: what must (not) have changed. */
  check?(s: Scene, r: CallResult, outcome: Outcome): Promise<void>;
  /** Runs after every call: undoes what the row (or a wrongly successful call) changed in A or B. */
  cleanup?(s: Scene): Promise<void>;
}

const ORGS = PlatformOrganizations;
const DOMAINS = PlatformDomains;
const ACTIONS = PlatformActions;
const USERS = PlatformUsers;
const MEMBERS = PlatformMemberships;
const PLAIN_PASSWORD = "Matrix-Pa55word!";

const idOf = (r: CallResult) => String(((r as { message: JsonObject }).message.details as JsonObject).id);

async function must(r: Promise<CallResult>, what: string): Promise<JsonObject> {
  const result = await r;
  if (!result.ok) throw new Error(`${what}: ${Code[result.code]} ${result.message}`);
  return result.message;
}

/** The admin's view of a domain: its organization, or undefined when no organization has it. */
async function ownerOfDomain(s: Scene, domain: string): Promise<string | undefined> {
  const found = await must(
    s.admin(DOMAINS, "SearchDomains", { filters: [{ domain: { domain, method: "TEXT_FILTER_METHOD_EQUALS" } }] }),
    "admin SearchDomains",
  );
  const rows = (found.result ?? []) as JsonObject[];
  return rows.length === 0 ? undefined : String(((rows[0]!.details as JsonObject).resourceOwner as JsonObject).id);
}

async function orgAsAdminSees(s: Scene, id: string): Promise<JsonObject | undefined> {
  const r = await s.admin(ORGS, "GetOrganization", { id });
  if (!r.ok && r.code === Code.NotFound) return undefined;
  return (await must(Promise.resolve(r), "admin GetOrganization")).organization as JsonObject;
}

async function addDomainAsAdmin(s: Scene, orgId: string): Promise<string> {
  const domain = s.unique("m") + ".matrix.example";
  await must(s.admin(DOMAINS, "AddDomain", { domain: { domain }, ctx: { orgId } }), "admin AddDomain");
  return domain;
}

async function freshTarget(s: Scene): Promise<string> {
  const made = await s.admin(ACTIONS, "CreateTarget", { target: { name: s.unique("matrix-target"), restWebhook: { url: "https://example.com/m" } } });
  await must(Promise.resolve(made), "admin CreateTarget");
  return idOf(made);
}

const expectState = async (s: Scene, outcome: Outcome, whenOk: string, otherwise: string) => {
  const seen = await orgAsAdminSees(s, s.org.id);
  expect(seen?.state, "the organization's state afterwards").toBe(outcome === OK ? whenOk : otherwise);
};

const reactivate = async (s: Scene) => {
  await s.admin(ORGS, "ReactivateOrganization", { id: s.org.id });
};

/** A fresh domain name in an AddDomain request, remembered for the check. */
function withDomain(s: Scene, rest: JsonObject): JsonObject {
  s.memo.domain = s.unique("add") + ".matrix.example";
  return { ...rest, domain: { domain: s.memo.domain } };
}

/** After AddDomain: the domain belongs to that organization when the call succeeded, else to none. */
const domainAddedTo = (expectedOrg: (s: Scene) => string) => async (s: Scene, _r: CallResult, outcome: Outcome) => {
  expect(await ownerOfDomain(s, s.memo.domain!), `owner of ${s.memo.domain}`).toBe(outcome === OK ? expectedOrg(s) : undefined);
};

const NO_SUCH_ORG = "01a20000-0000-7000-8000-00000000dead";
const NO_SUCH_DOMAIN = "no-such-domain.matrix.example";
const NO_SUCH_USER = "01a20000-0000-7000-8000-00000000beef";
const tomorrow = () => new Date(Date.now() + 24 * 3600_000).toISOString();
const detailsId = (m: JsonObject) => String((m.details as JsonObject).id);

/** A user the admin makes in the organization acted in (or the given one), remembered for the check. */
async function freshUser(s: Scene, kind: "machine" | "human" = "machine", orgId = s.org.id): Promise<string> {
  const username = s.unique("matrix-user");
  const user: JsonObject =
    kind === "machine"
      ? { username, machine: { name: "matrix" } }
      : { username, human: { profile: { givenName: "Matrix", familyName: "User" }, email: { address: `${username}@mail.example` } } };
  s.memo.user = detailsId(await must(s.admin(USERS, "CreateUser", { user, ctx: { orgId } }), "admin CreateUser"));
  return s.memo.user;
}

/** The plain user given a new, unverified email address by the admin: a request naming it. */
async function unverifiedPlain(s: Scene): Promise<JsonObject> {
  await must(s.admin(USERS, "PatchUser", { id: s.plainId, user: { human: { email: { address: `${s.unique("plain")}@mail.example` } } } }), "admin PatchUser");
  return { id: s.plainId };
}

async function userAsAdminSees(s: Scene, id: string): Promise<JsonObject | undefined> {
  const r = await s.admin(USERS, "GetUser", { id });
  if (!r.ok && r.code === Code.NotFound) return undefined;
  return (await must(Promise.resolve(r), "admin GetUser")).user as JsonObject;
}

/** A CreateUser request for a fresh machine user, its username remembered for the check. */
function withNewUser(s: Scene, rest: JsonObject): JsonObject {
  s.memo.username = s.unique("matrix-new");
  return { ...rest, user: { username: s.memo.username, machine: { name: "matrix new" } } };
}

/** After CreateUser: the user exists in that organization when the call succeeded, else nowhere. */
const userCreatedIn = (expectedOrg: (s: Scene) => string) => async (s: Scene, _r: CallResult, outcome: Outcome) => {
  const found = await must(s.admin(USERS, "SearchUsers", { filters: [{ username: { value: s.memo.username! } }] }), "admin SearchUsers");
  const owners = ((found.result ?? []) as JsonObject[]).map((u) => String(((u.details as JsonObject).resourceOwner as JsonObject).id));
  expect(owners, `organization of ${s.memo.username}`).toEqual(outcome === OK ? [expectedOrg(s)] : []);
};

/** The user the row acted on has this state afterwards when the call succeeded, that one otherwise. */
const stateAfter = (whenOk: string, otherwise: string) => async (s: Scene, _r: CallResult, outcome: Outcome) => {
  expect((await userAsAdminSees(s, s.memo.user!))?.state, "the user's state afterwards").toBe(outcome === OK ? whenOk : otherwise);
};

/** A property of the user the row acted on, afterwards. */
const userAfter = (pick: (u: JsonObject | undefined) => unknown, whenOk: unknown, otherwise: unknown) => async (s: Scene, _r: CallResult, outcome: Outcome) => {
  expect(pick(await userAsAdminSees(s, s.memo.user!)), "the user afterwards").toEqual(outcome === OK ? whenOk : otherwise);
};

type CredentialList = "SearchPersonalAccessTokens" | "SearchKeys" | "SearchMetadata" | "ListIDPLinks";

async function credentialCount(s: Scene, rpc: CredentialList): Promise<number> {
  const found = await must(s.admin(USERS, rpc, { id: s.memo.user! }), `admin ${rpc}`);
  return Number((found.details as JsonObject | undefined)?.totalResult ?? 0);
}

const credentialsAfter = (rpc: CredentialList, whenOk: number, otherwise: number) => async (s: Scene, _r: CallResult, outcome: Outcome) => {
  expect(await credentialCount(s, rpc), `${rpc} afterwards`).toBe(outcome === OK ? whenOk : otherwise);
};

/** The ways of signing in of the user the row acted on, as the admin sees them ("AUTH_METHOD_TYPE_" left off). */
async function authMethods(s: Scene): Promise<string[]> {
  const found = await must(s.admin(USERS, "ListAuthMethods", { id: s.memo.user! }), "admin ListAuthMethods");
  return ((found.authMethodTypes ?? []) as string[]).map((t) => t.replace("AUTH_METHOD_TYPE_", ""));
}

const methodsAfter = (whenOk: string[], otherwise: string[]) => async (s: Scene, _r: CallResult, outcome: Outcome) => {
  expect(await authMethods(s), "ListAuthMethods afterwards").toEqual(outcome === OK ? whenOk : otherwise);
};

/** A person of the organization acted in with a verified email address and phone number, made by the admin. */
async function verifiedPerson(s: Scene): Promise<string> {
  const username = s.unique("matrix-person");
  const human = {
    profile: { givenName: "Matrix", familyName: "Person" },
    email: { address: `${username}@mail.example`, isVerified: true },
    phone: { number: "+41790000002", isVerified: true },
  };
  s.memo.user = detailsId(await must(s.admin(USERS, "CreateUser", { user: { username, human }, ctx: { orgId: s.org.id } }), "admin CreateUser"));
  return s.memo.user;
}

/** The plain user, its email address and phone number verified by the admin (for its own one-time-code factors). */
async function verifiedPlain(s: Scene): Promise<string> {
  s.memo.user = s.plainId;
  const human = { email: { address: "plain@mail.example", isVerified: true }, phone: { number: "+41790000003", isVerified: true } };
  await must(s.admin(USERS, "PatchUser", { id: s.plainId, user: { human } }), "admin verifies the plain user's contacts");
  return s.plainId;
}

/** A TOTP authenticator the admin sets up for the user, pending or verified: its secret. */
async function adminTotp(s: Scene, id: string, verify: boolean): Promise<string> {
  const secret = String((await must(s.admin(USERS, "AddTOTP", { id }), "admin AddTOTP")).secret);
  if (verify) await must(s.admin(USERS, "VerifyTOTP", { id, verification: { code: totpCode(secret) } }), "admin VerifyTOTP");
  return secret;
}

/** After AddTOTP: the answered secret is the one pending (the admin verifies it with its code), else nothing is. */
async function answeredSecretPending(s: Scene, r: CallResult, outcome: Outcome) {
  const secret = outcome === OK ? String((r as { message: JsonObject }).message.secret) : undefined;
  const verified = await s.admin(USERS, "VerifyTOTP", { id: s.memo.user!, verification: { code: secret ? totpCode(secret) : "123456" } });
  expect(verified, "the admin verifies the answered secret").toMatchObject(outcome === OK ? { ok: true } : { ok: false, code: Code.FailedPrecondition });
}

/** Undoes a self row: the plain user's factor of that kind goes, whatever happened. */
const plainWithout = (removal: string) => async (s: Scene) => {
  await s.admin(USERS, removal, { id: s.plainId });
};

/** The relying party id of passkeys and security keys: the test server's instance domain. */
const KEY_DOMAIN = "localhost";

/** The calls of each kind of WebAuthn credential, the field naming its id, its state's prefix and its auth method. */
const KEY_KINDS = {
  passkey: { label: "Passkey", list: "ListPasskeys", idField: "passkeyId", state: "PASSKEY_STATE_", method: "PASSKEY" },
  u2f: { label: "U2F", list: "ListU2F", idField: "u2fId", state: "U2F_STATE_", method: "U2F" },
} as const;
type KeyKind = keyof typeof KEY_KINDS;

/** A registration the admin starts for the user, answered by a software authenticator: the Finish…Registration request. */
async function keyFinish(kind: KeyKind, s: Scene, id: string): Promise<JsonObject> {
  const k = KEY_KINDS[kind];
  s.memo.user = id;
  const started = await must(s.admin(USERS, `Start${k.label}Registration`, { id, domain: KEY_DOMAIN }), `admin Start${k.label}Registration`);
  const answer = new SoftwareAuthenticator(s.baseUrl).create(started.publicKeyCredentialCreationOptions as never);
  return { id, [k.idField]: String(started[k.idField]), publicKeyCredential: answer as unknown as JsonObject, name: "Matrix key" };
}

/** A key the admin registers for the user: its id. */
async function adminKey(kind: KeyKind, s: Scene, id: string): Promise<string> {
  const request = await keyFinish(kind, s, id);
  await must(s.admin(USERS, `Finish${KEY_KINDS[kind].label}Registration`, request), `admin Finish${KEY_KINDS[kind].label}Registration`);
  return String(request[KEY_KINDS[kind].idField]);
}

/** Undoes a self row: the plain user's keys of the kind go, registered or not. */
const plainWithoutKeys = (kind: KeyKind) => async (s: Scene) => {
  const k = KEY_KINDS[kind];
  const listed = await must(s.admin(USERS, k.list, { id: s.plainId }), `admin ${k.list}`);
  for (const p of (listed.result ?? []) as JsonObject[]) await s.admin(USERS, `Remove${k.label}`, { id: s.plainId, [k.idField]: String(p.id) });
};

/** Passkeys and security keys alike: user.credential.write, self for people; List… user.read, self. */
function webAuthnKeyRows(kind: KeyKind): Row[] {
  const k = KEY_KINDS[kind];
  const [start, finish, remove] = [`Start${k.label}Registration`, `Finish${k.label}Registration`, `Remove${k.label}`];
  /** The states of the keys of the user the row acted on (the prefix left off), when the call succeeded and otherwise. */
  const statesAfter = (whenOk: string[], otherwise: string[]) => async (s: Scene, _r: CallResult, outcome: Outcome) => {
    const listed = await must(s.admin(USERS, k.list, { id: s.memo.user! }), `admin ${k.list}`);
    const states = ((listed.result ?? []) as JsonObject[]).map((p) => String(p.state).replace(k.state, ""));
    expect(states, `${k.list} afterwards`).toEqual(outcome === OK ? whenOk : otherwise);
  };
  const plainWithout = plainWithoutKeys(kind);
  return [
    {
      service: USERS,
      rpc: start,
      what: "for a person of the organization acted in (user.credential.write)",
      expect: [U, OK, OK, D, OK, D, D, D, D],
      request: async (s) => ({ id: await freshUser(s, "human"), domain: KEY_DOMAIN }),
      check: statesAfter(["PENDING"], []),
      cleanup: removeUser,
    },
    {
      service: USERS,
      rpc: start,
      what: "for the plain user (self for the plain user)",
      expect: [U, OK, OK, D, D, D, D, D, OK],
      request: (s) => {
        s.memo.user = s.plainId;
        return { id: s.plainId, domain: KEY_DOMAIN };
      },
      check: statesAfter(["PENDING"], []),
      cleanup: plainWithout,
    },
    {
      service: USERS,
      rpc: start,
      what: "for a machine user (people only)",
      expect: [U, FP, FP, D, FP, D, D, D, D],
      request: async (s) => ({ id: await freshUser(s), domain: KEY_DOMAIN }),
      cleanup: removeUser,
    },
    {
      service: USERS,
      rpc: start,
      what: "an id no user has",
      expect: [U, NF, NF, D, NF, NF, D, D, D],
      request: () => ({ id: NO_SUCH_USER, domain: KEY_DOMAIN }),
    },
    {
      service: USERS,
      rpc: finish,
      what: "of a person of the organization acted in, with its authenticator's answer",
      expect: [U, OK, OK, D, OK, D, D, D, D],
      request: async (s) => keyFinish(kind, s, await freshUser(s, "human")),
      check: methodsAfter([k.method], []),
      cleanup: removeUser,
    },
    {
      service: USERS,
      rpc: finish,
      what: "the plain user's own registration (self for the plain user)",
      expect: [U, OK, OK, D, D, D, D, D, OK],
      request: (s) => keyFinish(kind, s, s.plainId),
      check: methodsAfter(["PASSWORD", k.method], ["PASSWORD"]),
      cleanup: plainWithout,
    },
    {
      service: USERS,
      rpc: k.list,
      what: "of a person of the organization acted in (user.read)",
      expect: [U, OK, OK, OK, OK, D, OK, D, D],
      async request(s) {
        const id = await freshUser(s, "human");
        await adminKey(kind, s, id);
        return { id };
      },
      async check(_s, r, outcome) {
        if (outcome === OK) expect(((r as { message: JsonObject }).message.result as JsonObject[]).map((p) => p.state)).toEqual([`${k.state}READY`]);
      },
      cleanup: removeUser,
    },
    {
      service: USERS,
      rpc: k.list,
      what: "of the caller itself (self)",
      expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
      request: (s) => ({ id: s.self }),
      async check(_s, r, outcome) {
        if (outcome === OK) expect((r as { message: JsonObject }).message.result ?? []).toEqual([]);
      },
    },
    {
      service: USERS,
      rpc: remove,
      what: "of a person of the organization acted in",
      expect: [U, OK, OK, D, OK, D, D, D, D],
      async request(s) {
        const id = await freshUser(s, "human");
        return { id, [k.idField]: await adminKey(kind, s, id) };
      },
      check: methodsAfter([], [k.method]),
      cleanup: removeUser,
    },
    {
      service: USERS,
      rpc: remove,
      what: "the plain user's own (self for the plain user)",
      expect: [U, OK, OK, D, D, D, D, D, OK],
      request: async (s) => ({ id: s.plainId, [k.idField]: await adminKey(kind, s, s.plainId) }),
      check: methodsAfter(["PASSWORD"], ["PASSWORD", k.method]),
      cleanup: plainWithout,
    },
  ];
}

/** Rows that make users remove them again, whatever happened. */
const removeUser = async (s: Scene) => {
  for (const id of [s.memo.user, s.memo.other]) if (id) await s.admin(USERS, "DeleteUser", { id });
};

/** The roles of a user's membership in a context (ctx as in the request), as the admin sees them. */
async function membershipRoles(s: Scene, userId: string, ctx: JsonObject | undefined): Promise<unknown> {
  const found = await must(s.admin(MEMBERS, "SearchMemberships", { filters: [{ user: { userId } }], ...(ctx && { ctx }) }), "admin SearchMemberships");
  const type = ctx?.system ? "OWNER_TYPE_SYSTEM" : ctx?.orgId ? "OWNER_TYPE_ORG" : "OWNER_TYPE_INSTANCE";
  return ((found.result ?? []) as JsonObject[]).find((m) => (m.context as JsonObject).type === type)?.roles;
}

/** A fresh user (of the default organization) with a membership the admin grants in ctx. */
async function member(s: Scene, roles: string[], ctx: JsonObject | undefined): Promise<string> {
  const userId = await freshUser(s, "machine", s.defaultOrgId);
  if (roles.length > 0) await must(s.admin(MEMBERS, "CreateMembership", { membership: { userId, roles }, ...(ctx && { ctx }) }), "admin CreateMembership");
  return userId;
}

const rolesAfter =
  (ctx: (s: Scene) => JsonObject | undefined, whenOk: string[] | undefined, otherwise: string[] | undefined) =>
  async (s: Scene, _r: CallResult, outcome: Outcome) => {
    expect(await membershipRoles(s, s.memo.user!, ctx(s)), "the membership's roles afterwards").toEqual(outcome === OK ? whenOk : otherwise);
  };

const inOrgActedIn = (s: Scene): JsonObject => ({ orgId: s.org.id });
const inInstance = (): undefined => undefined;
const inSystem = (): JsonObject => ({ system: true });

/** Names of the roles ListAvailableRoles answered. */
const roleNamesAre = (names: string[]) => async (_s: Scene, r: CallResult, outcome: Outcome) => {
  if (outcome === OK) expect((((r as { message: JsonObject }).message.roles ?? []) as JsonObject[]).map((x) => x.name).sort()).toEqual(names);
};

const SESSIONS = PlatformSessions;
const NO_SUCH_SESSION = "01a20000-0000-7000-8000-00000000cafe";

/** A session the admin makes for the user, its user checked and nothing else, remembered for the check: its id and token. */
async function freshSession(s: Scene, userId: string): Promise<{ id: string; sessionToken: string }> {
  const made = await must(s.admin(SESSIONS, "CreateSession", { checks: { user: { userId } } }), "admin CreateSession");
  s.memo.session = String(made.sessionId);
  return { id: s.memo.session, sessionToken: String(made.sessionToken) };
}

/** A session of a fresh person of the organization acted in. */
const personsSession = async (s: Scene) => freshSession(s, await freshUser(s, "human"));

/** The session the row acted on as the admin sees it afterwards: undefined when it is gone. */
async function sessionAsAdminSees(s: Scene): Promise<JsonObject | undefined> {
  const r = await s.admin(SESSIONS, "GetSession", { id: s.memo.session! });
  if (!r.ok && r.code === Code.NotFound) return undefined;
  return (await must(Promise.resolve(r), "admin GetSession")).session as JsonObject;
}

const sessionAfter =
  (pick: (session: JsonObject | undefined) => unknown, whenOk: unknown, otherwise: unknown) => async (s: Scene, _r: CallResult, outcome: Outcome) => {
    expect(pick(await sessionAsAdminSees(s)), "the session afterwards").toEqual(outcome === OK ? whenOk : otherwise);
  };

/** Undoes a session row: its session and its person go, whatever happened. */
const removeSession = async (s: Scene) => {
  if (s.memo.session) await s.admin(SESSIONS, "DeleteSession", { id: s.memo.session });
  await removeUser(s);
};

/** The OAuth provider of each server (by its base URL) that intents are started with: nothing upstream is called to start one. */
const intentIdps = new Map<string, string>();

/** A StartIDPIntent request for that provider (ctx: the organization acted in). */
async function intentStart(s: Scene, ctx?: JsonObject): Promise<JsonObject> {
  let idpId = intentIdps.get(s.baseUrl);
  if (idpId === undefined) {
    const config = {
      clientId: "matrix",
      clientSecret: "matrix-secret",
      authorizationEndpoint: "https://oauth.matrix.example/authorize",
      tokenEndpoint: "https://oauth.matrix.example/token",
      userEndpoint: "https://oauth.matrix.example/user",
      idAttribute: "id",
    };
    idpId = detailsId(
      await must(s.admin(PlatformIdentityProviders, "CreateOAuthIDP", { idp: { idp: { name: s.unique("matrix-oauth") }, config } }), "admin CreateOAuthIDP"),
    );
    intentIdps.set(s.baseUrl, idpId);
  }
  return { idpId, successUrl: "https://login.matrix.example/ok", failureUrl: "https://login.matrix.example/failed", ...(ctx && { ctx }) };
}

/** After StartIDPIntent: what it answered sends the browser to the provider. */
async function sentUpstream(_s: Scene, r: CallResult, outcome: Outcome) {
  if (outcome === OK) expect(String((r as { message: JsonObject }).message.authUrl)).toMatch(/^https:\/\/oauth\.matrix\.example\/authorize\?/);
}

/** The fixture app of each server (by its base URL) that authorization requests are made for. */
const loginApps = new Map<string, string>();

/** A waiting authorization request (at the built-in pages: this server has no login UI): its id. */
async function waitingAuthRequest(s: Scene): Promise<string> {
  let clientId = loginApps.get(s.baseUrl);
  if (clientId === undefined) {
    const project = await must(s.admin(PlatformProjects, "CreateProject", { project: { name: s.unique("matrix-login") } }), "admin CreateProject");
    const app = await must(
      s.admin(PlatformApps, "CreateApp", { projectId: detailsId(project), app: { name: "matrix-login", oidc: oidc() } }),
      "admin CreateApp",
    );
    clientId = String(app.clientId);
    loginApps.set(s.baseUrl, clientId);
  }
  const url = new URL("/oauth/v2/authorize", s.baseUrl);
  url.search = new URLSearchParams({ client_id: clientId, redirect_uri: "https://app.example/cb", response_type: "code", scope: "openid" }).toString();
  const res = await fetch(url, { redirect: "manual" });
  const id = /\/ui\/login\/([^/?]+)$/.exec(res.headers.get("location") ?? "")?.[1];
  if (id === undefined) throw new Error(`authorize answered ${res.status} ${res.headers.get("location")}`);
  return id;
}

//                                             none system iam  iamView ownerA ownerB viewA viewB plain
const NO_SUCH_PROVIDER = "01a20000-0000-7000-8000-0000000000aa";

/**
 * The rows of one provider family: instance.notification.read and .write, of the instance
 * only. Providers are `http` ones at an internal address, which nothing here may call: a
 * permitted _test is refused by the address policy (FailedPrecondition).
 */
function providerRows(family: "SMTP" | "SMS"): Row[] {
  const service = family === "SMTP" ? PlatformSMTPProviders : PlatformSMSProviders;
  const provider = (s: Scene) => ({ description: s.unique("matrix-provider"), http: { url: "http://127.0.0.1:9/matrix" } });
  const fresh = async (s: Scene, active = false) => {
    s.memo.provider = detailsId(await must(s.admin(service, `Create${family}Provider`, { provider: provider(s) }), `admin Create${family}Provider`));
    if (active) await must(s.admin(service, `Activate${family}Provider`, { id: s.memo.provider }), `admin Activate${family}Provider`);
    return { id: s.memo.provider };
  };
  const seen = async (s: Scene) => {
    const r = await s.admin(service, `Get${family}Provider`, { id: s.memo.provider! });
    return r.ok ? (r.message.provider as JsonObject) : undefined;
  };
  const after = (pick: (p: JsonObject | undefined) => unknown, whenOk: unknown, otherwise: unknown) => async (s: Scene, _r: CallResult, outcome: Outcome) => {
    expect(pick(await seen(s)), `the provider afterwards (${outcome})`).toEqual(outcome === OK ? whenOk : otherwise);
  };
  const cleanup = async (s: Scene) => {
    if (s.memo.provider) await s.admin(service, `Delete${family}Provider`, { id: s.memo.provider });
  };
  const write = [U, OK, OK, D, D, D, D, D, D] as const;
  const read = [U, OK, OK, OK, D, D, D, D, D] as const;
  return [
    { service, rpc: `Create${family}Provider`, what: "", expect: write, request: (s) => ({ provider: provider(s) }) },
    { service, rpc: `Get${family}Provider`, what: "", expect: read, request: (s) => fresh(s), cleanup },
    { service, rpc: `Get${family}Provider`, what: "of no provider", expect: [U, NF, NF, NF, D, D, D, D, D], request: () => ({ id: NO_SUCH_PROVIDER }) },
    { service, rpc: `Search${family}Providers`, what: "", expect: read, request: () => ({}) },
    {
      service,
      rpc: `Patch${family}Provider`,
      what: "",
      expect: write,
      cleanup,
      request: async (s) => ({ ...(await fresh(s)), provider: { description: "patched" } }),
      check: after((p) => p?.description, "patched", expect.stringContaining("matrix-provider")),
    },
    {
      service,
      rpc: `Delete${family}Provider`,
      what: "",
      expect: write,
      cleanup,
      request: (s) => fresh(s),
      check: after((p) => p !== undefined, false, true),
    },
    {
      service,
      rpc: `Activate${family}Provider`,
      what: "",
      expect: write,
      cleanup,
      request: (s) => fresh(s),
      check: after((p) => p?.state, "EFFECTIVE_STATE_ACTIVE", "EFFECTIVE_STATE_INACTIVE"),
    },
    { service, rpc: `Activate${family}Provider`, what: "of no provider", expect: [U, NF, NF, D, D, D, D, D, D], request: () => ({ id: NO_SUCH_PROVIDER }) },
    {
      service,
      rpc: `Deactivate${family}Provider`,
      what: "",
      expect: write,
      cleanup,
      request: (s) => fresh(s, true),
      check: after((p) => p?.state, "EFFECTIVE_STATE_INACTIVE", "EFFECTIVE_STATE_ACTIVE"),
    },
    {
      service,
      rpc: `Test${family}Provider`,
      what: "of a provider at an internal address",
      expect: [U, FP, FP, D, D, D, D, D, D],
      cleanup,
      request: async (s) => ({ ...(await fresh(s)), test: { receiver: family === "SMTP" ? "matrix@mail.example" : "+41790000000" } }),
    },
  ];
}

const ROWS: Row[] = [
  // PlatformOrganizations
  {
    service: ORGS,
    rpc: "CreateOrganization",
    what: "a new organization (an instance-wide write)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => ({ organization: { name: s.unique("Matrix new") } }),
  },
  {
    service: ORGS,
    rpc: "GetOrganization",
    what: "the organization acted in",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    request: (s) => ({ id: s.org.id }),
    async check(s, r, outcome) {
      if (outcome === OK) expect(idOf({ ok: true, message: (r as { message: JsonObject }).message.organization as JsonObject })).toBe(s.org.id);
    },
  },
  {
    service: ORGS,
    rpc: "GetOrganization",
    what: "an id no organization has",
    expect: [U, NF, NF, NF, NF, NF, NF, NF, D],
    request: () => ({ id: NO_SUCH_ORG }),
  },
  {
    service: ORGS,
    rpc: "SearchOrganizations",
    what: "without filters",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, D],
    visible: ["-", "all", "all", "all", "A", "A", "A", "A", "-"],
    request: () => ({ query: { limit: 1000 } }),
  },
  {
    service: ORGS,
    rpc: "SearchOrganizations",
    what: "filtered to the id of the organization acted in",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, D],
    visible: ["-", "A", "A", "A", "A", "none", "A", "none", "-"],
    request: (s) => ({ filters: [{ inIds: { ids: [s.org.id] } }] }),
  },
  {
    service: ORGS,
    rpc: "PatchOrganization",
    what: "renaming the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      s.memo.before = String((await orgAsAdminSees(s, s.org.id))!.name);
      s.memo.name = s.unique("Matrix renamed");
      return { id: s.org.id, organization: { name: s.memo.name } };
    },
    async check(s, _r, outcome) {
      const seen = await orgAsAdminSees(s, s.org.id);
      expect(seen?.name, "the organization's name afterwards").toBe(outcome === OK ? s.memo.name : s.memo.before);
    },
  },
  {
    service: ORGS,
    rpc: "DeleteOrganization",
    what: "the organization acted in (org.delete: instance roles only)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    fresh: true,
    request: (s) => ({ id: s.org.id }),
    async check(s, _r, outcome) {
      expect(await orgAsAdminSees(s, s.org.id), "the organization afterwards").toEqual(
        outcome === OK ? undefined : expect.objectContaining({ name: expect.any(String) }),
      );
    },
  },
  {
    service: ORGS,
    rpc: "DeleteOrganization",
    what: "an id no organization has",
    expect: [U, NF, NF, D, D, D, D, D, D],
    request: () => ({ id: NO_SUCH_ORG }),
  },
  {
    // The default organization holds the system's owner: an IAM_OWNER lacks its power (docs/api.md).
    service: ORGS,
    rpc: "DeleteOrganization",
    what: "the instance's default organization",
    expect: [U, FP, D, D, D, D, D, D, D],
    request: (s) => ({ id: s.defaultOrgId }),
  },
  {
    service: ORGS,
    rpc: "DeactivateOrganization",
    what: "the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    fresh: true,
    request: (s) => ({ id: s.org.id }),
    check: (s, _r, outcome) => expectState(s, outcome, "ORGANIZATION_STATE_INACTIVE", "ORGANIZATION_STATE_ACTIVE"),
    cleanup: reactivate,
  },
  {
    service: ORGS,
    rpc: "ReactivateOrganization",
    what: "the (deactivated) organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    fresh: true,
    async request(s) {
      await must(s.admin(ORGS, "DeactivateOrganization", { id: s.org.id }), "admin DeactivateOrganization");
      return { id: s.org.id };
    },
    check: (s, _r, outcome) => expectState(s, outcome, "ORGANIZATION_STATE_ACTIVE", "ORGANIZATION_STATE_INACTIVE"),
    cleanup: reactivate,
  },
  {
    service: ORGS,
    rpc: "SetAsInstanceDefault",
    what: "the organization acted in (instance.write)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => ({ id: s.org.id }),
    async check(s, _r, outcome) {
      const now = await must(s.admin(ORGS, "GetInstanceDefault", {}), "admin GetInstanceDefault");
      expect(idOf({ ok: true, message: now.organization as JsonObject }), "the default afterwards").toBe(outcome === OK ? s.org.id : s.defaultOrgId);
    },
    async cleanup(s) {
      await must(s.admin(ORGS, "SetAsInstanceDefault", { id: s.defaultOrgId }), "admin resets the default");
    },
  },
  {
    service: ORGS,
    rpc: "GetInstanceDefault",
    what: "(org.read in the instance)",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: () => ({}),
    async check(s, r, outcome) {
      if (outcome === OK) expect(idOf({ ok: true, message: (r as { message: JsonObject }).message.organization as JsonObject })).toBe(s.defaultOrgId);
    },
  },

  // PlatformDomains
  {
    service: DOMAINS,
    rpc: "AddDomain",
    what: "with ctx.orgId of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: (s) => withDomain(s, { ctx: { orgId: s.org.id } }),
    check: domainAddedTo((s) => s.org.id),
  },
  {
    service: DOMAINS,
    rpc: "AddDomain",
    what: "with ctx.orgDomain of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: (s) => withDomain(s, { ctx: { orgDomain: s.org.primary } }),
    check: domainAddedTo((s) => s.org.id),
  },
  {
    service: DOMAINS,
    rpc: "AddDomain",
    what: "without ctx (the default organization)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => withDomain(s, {}),
    check: domainAddedTo((s) => s.defaultOrgId),
  },
  {
    service: DOMAINS,
    rpc: "AddDomain",
    what: "with ctx.instanceId of its own instance (the default organization)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => withDomain(s, { ctx: { instanceId: s.instanceId } }),
    check: domainAddedTo((s) => s.defaultOrgId),
  },
  {
    // The ctx names an organization that does not exist: by the resource rule, only who may
    // add domains somewhere learns that; others get PermissionDenied, as for B.
    service: DOMAINS,
    rpc: "AddDomain",
    what: "with ctx.orgId of no organization",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: (s) => withDomain(s, { ctx: { orgId: NO_SUCH_ORG } }),
  },
  {
    service: DOMAINS,
    rpc: "SearchDomains",
    what: "without ctx",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, D],
    visible: ["-", "all", "all", "all", "A", "A", "A", "A", "-"],
    request: () => ({ query: { limit: 1000 } }),
  },
  {
    service: DOMAINS,
    rpc: "SearchDomains",
    what: "with ctx.orgId of the organization acted in",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    visible: ["-", "A", "A", "A", "A", "-", "A", "-", "-"],
    request: (s) => ({ ctx: { orgId: s.org.id }, query: { limit: 1000 } }),
  },
  {
    service: DOMAINS,
    rpc: "SearchDomains",
    what: "with ctx.orgDomain of no organization",
    expect: [U, NF, NF, NF, NF, NF, NF, NF, D],
    request: () => ({ ctx: { orgDomain: NO_SUCH_DOMAIN } }),
  },
  {
    service: DOMAINS,
    rpc: "DeleteDomain",
    what: "an added domain of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      s.memo.domain = await addDomainAsAdmin(s, s.org.id);
      return { domain: s.memo.domain };
    },
    async check(s, _r, outcome) {
      const domain = s.memo.domain!;
      expect(await ownerOfDomain(s, domain), `owner of ${domain} afterwards`).toBe(outcome === OK ? undefined : s.org.id);
    },
  },
  {
    service: DOMAINS,
    rpc: "DeleteDomain",
    what: "the primary domain of the organization acted in",
    expect: [U, FP, FP, D, FP, D, D, D, D],
    request: (s) => ({ domain: s.org.primary }),
  },
  {
    service: DOMAINS,
    rpc: "DeleteDomain",
    what: "a domain of the other organization, with ctx.orgId of the one acted in",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    async request(s) {
      s.memo.domain = await addDomainAsAdmin(s, s.other.id);
      return { domain: s.memo.domain, ctx: { orgId: s.org.id } };
    },
    async check(s) {
      expect(await ownerOfDomain(s, s.memo.domain!), "the other organization keeps its domain").toBe(s.other.id);
    },
  },
  {
    service: DOMAINS,
    rpc: "DeleteDomain",
    what: "a domain no organization has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ domain: NO_SUCH_DOMAIN }),
  },
  {
    service: DOMAINS,
    rpc: "SetAsPrimary",
    what: "an added domain of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      s.memo.domain = await addDomainAsAdmin(s, s.org.id);
      return { domain: s.memo.domain };
    },
    async check(s, _r, outcome) {
      const org = await orgAsAdminSees(s, s.org.id);
      expect(org?.primaryDomain, "the primary domain afterwards").toBe(outcome === OK ? s.memo.domain : s.org.primary);
    },
    async cleanup(s) {
      await must(s.admin(DOMAINS, "SetAsPrimary", { domain: s.org.primary }), "admin restores the primary domain");
    },
  },
  {
    service: DOMAINS,
    rpc: "SetAsPrimary",
    what: "a domain of the other organization, with ctx.orgId of the one acted in",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    async request(s) {
      return { domain: await addDomainAsAdmin(s, s.other.id), ctx: { orgId: s.org.id } };
    },
  },
  {
    service: DOMAINS,
    rpc: "SetAsPrimary",
    what: "a domain no organization has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ domain: NO_SUCH_DOMAIN }),
  },
  {
    service: DOMAINS,
    rpc: "GenerateDomainValidation",
    what: "for an added domain of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      s.memo.domain = await addDomainAsAdmin(s, s.org.id);
      return { domain: s.memo.domain, type: "DOMAIN_VALIDATION_TYPE_DNS" };
    },
    async check(s, r, outcome) {
      if (outcome === OK) expect((r as { message: JsonObject }).message.location).toBe(`_platform-challenge.${s.memo.domain}`);
    },
  },
  {
    service: DOMAINS,
    rpc: "GenerateDomainValidation",
    what: "for the generated primary domain of the organization acted in",
    expect: [U, FP, FP, D, FP, D, D, D, D],
    request: (s) => ({ domain: s.org.primary, type: "DOMAIN_VALIDATION_TYPE_HTTP" }),
  },
  {
    service: DOMAINS,
    rpc: "GenerateDomainValidation",
    what: "for a domain of the other organization, with ctx.orgId of the one acted in",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    async request(s) {
      return { domain: await addDomainAsAdmin(s, s.other.id), type: "DOMAIN_VALIDATION_TYPE_DNS", ctx: { orgId: s.org.id } };
    },
  },
  {
    service: DOMAINS,
    rpc: "GenerateDomainValidation",
    what: "for a domain no organization has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ domain: NO_SUCH_DOMAIN, type: "DOMAIN_VALIDATION_TYPE_DNS" }),
  },
  {
    service: DOMAINS,
    rpc: "ValidateDomain",
    what: "an added domain of the organization acted in whose TXT record holds its token",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      s.memo.domain = await addDomainAsAdmin(s, s.org.id);
      const generated = await must(
        s.admin(DOMAINS, "GenerateDomainValidation", { domain: s.memo.domain, type: "DOMAIN_VALIDATION_TYPE_DNS" }),
        "admin GenerateDomainValidation",
      );
      s.publishTxt(`_platform-challenge.${s.memo.domain}`, [String(generated.token)]);
      return { domain: s.memo.domain };
    },
    async check(s, _r, outcome) {
      const found = await must(
        s.admin(DOMAINS, "SearchDomains", { filters: [{ domain: { domain: s.memo.domain!, method: "TEXT_FILTER_METHOD_EQUALS" } }] }),
        "admin SearchDomains",
      );
      expect((found.result as JsonObject[])[0]!.isVerified ?? false, "verified afterwards").toBe(outcome === OK);
    },
  },
  {
    service: DOMAINS,
    rpc: "ValidateDomain",
    what: "an added domain of the organization acted in without a token",
    expect: [U, FP, FP, D, FP, D, D, D, D],
    request: async (s) => ({ domain: await addDomainAsAdmin(s, s.org.id) }),
  },
  {
    service: DOMAINS,
    rpc: "ValidateDomain",
    what: "a domain of the other organization, with ctx.orgId of the one acted in",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    async request(s) {
      return { domain: await addDomainAsAdmin(s, s.other.id), ctx: { orgId: s.org.id } };
    },
  },
  {
    service: DOMAINS,
    rpc: "ValidateDomain",
    what: "a domain no organization has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ domain: NO_SUCH_DOMAIN }),
  },

  // PlatformActions: instance-wide, no organization has any of it.
  {
    service: ACTIONS,
    rpc: "CreateTarget",
    what: "",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => ({ target: { name: s.unique("matrix-new"), restWebhook: { url: "https://example.com/n" } } }),
  },
  {
    service: ACTIONS,
    rpc: "PatchTarget",
    what: "",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ id: await freshTarget(s), target: { timeout: "7s" } }),
  },
  {
    service: ACTIONS,
    rpc: "DeleteTarget",
    what: "",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ id: await freshTarget(s) }),
  },
  {
    service: ACTIONS,
    rpc: "GetTarget",
    what: "",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: (s) => ({ id: s.targetId }),
  },
  {
    service: ACTIONS,
    rpc: "SearchTargets",
    what: "",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: () => ({}),
  },
  {
    service: ACTIONS,
    rpc: "PutExecution",
    what: "",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => ({ execution: { condition: { function: "preaccesstoken" }, targets: [s.targetId] } }),
  },
  {
    service: ACTIONS,
    rpc: "DeleteExecution",
    what: "",
    expect: [U, OK, OK, D, D, D, D, D, D],
    async request(s) {
      await must(s.admin(ACTIONS, "PutExecution", { execution: { condition: { function: "preuserinfo" }, targets: [s.targetId] } }), "admin PutExecution");
      return { id: "function/preuserinfo" };
    },
  },
  {
    service: ACTIONS,
    rpc: "SearchExecutions",
    what: "",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: () => ({}),
  },
  {
    service: ACTIONS,
    rpc: "ListAvailableExecutionFunctions",
    what: "",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: () => ({}),
  },
  {
    service: ACTIONS,
    rpc: "ListAvailableExecutionMethods",
    what: "",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: () => ({}),
  },
  {
    service: ACTIONS,
    rpc: "ListAvailableExecutionServices",
    what: "",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: () => ({}),
  },
  {
    service: ACTIONS,
    rpc: "ListAvailableExecutionEvents",
    what: "",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: () => ({}),
  },
  {
    service: ACTIONS,
    rpc: "SearchDeliveries",
    what: "",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: () => ({}),
  },
  {
    service: ACTIONS,
    rpc: "RetryDelivery",
    what: "of no delivery",
    expect: [U, NF, NF, D, D, D, D, D, D],
    request: () => ({ id: "no-such-delivery" }),
  },
  {
    service: ACTIONS,
    rpc: "RetryDelivery",
    what: "of a delivered delivery",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ id: await s.deliveredDelivery() }),
  },

  // PlatformNotifications: the instance's message log, instance-wide like its providers.
  {
    service: PlatformNotifications,
    rpc: "SearchNotifications",
    what: "",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: () => ({}),
  },
  {
    service: PlatformNotifications,
    rpc: "RetryNotification",
    what: "of a pending message (nothing to retry)",
    expect: [U, FP, FP, D, D, D, D, D, D],
    async request(s) {
      const userId = await freshUser(s, "human");
      const found = await must(s.admin(PlatformNotifications, "SearchNotifications", { filters: [{ user: { userId } }] }), "admin SearchNotifications");
      return { id: String(((found.result as JsonObject[])[0] as JsonObject).id) };
    },
    cleanup: removeUser,
  },
  {
    service: PlatformNotifications,
    rpc: "RetryNotification",
    what: "of no message",
    expect: [U, NF, NF, D, D, D, D, D, D],
    request: () => ({ id: NO_SUCH_USER }),
  },
  // PlatformAuthRequests: session.link in the instance (IAM_OWNER, and LOGIN_CLIENT: test/sessions/login-ui.test.ts).
  {
    service: PlatformAuthRequests,
    rpc: "GetAuthRequest",
    what: "of a waiting request",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ id: await waitingAuthRequest(s) }),
  },
  {
    service: PlatformAuthRequests,
    rpc: "GetAuthRequest",
    what: "of no request",
    expect: [U, NF, NF, D, D, D, D, D, D],
    request: () => ({ id: "no-such-request" }),
  },
  {
    service: PlatformAuthRequests,
    rpc: "FinalizeAuthRequest",
    what: "of no request",
    expect: [U, NF, NF, D, D, D, D, D, D],
    request: () => ({ id: "no-such-request", sessionId: "no-such-session", sessionToken: "no-such-token" }),
  },
  // PlatformSessions: session.* in the instance (IAM_OWNER; IAM_OWNER_VIEWER reads). A person
  // reads, finds and ends its own sessions; a session's token stands in for the permission
  // of GetSession and DeleteSession.
  {
    service: SESSIONS,
    rpc: "CreateSession",
    what: "for a person, its user checked (session.write)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ checks: { user: { userId: await freshUser(s, "human") } } }),
    async check(s, _r, outcome) {
      const found = await must(s.admin(SESSIONS, "SearchSessions", { filters: [{ userId: s.memo.user! }] }), "admin SearchSessions");
      expect(((found.result ?? []) as JsonObject[]).length, "sessions of the person afterwards").toBe(outcome === OK ? 1 : 0);
    },
    cleanup: removeUser,
  },
  {
    service: SESSIONS,
    rpc: "GetSession",
    what: "of a person's session (session.read)",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: async (s) => ({ id: (await personsSession(s)).id }),
    cleanup: removeSession,
  },
  {
    service: SESSIONS,
    rpc: "GetSession",
    what: "of the plain user's session (self for the plain user)",
    expect: [U, OK, OK, OK, D, D, D, D, OK],
    request: async (s) => ({ id: (await freshSession(s, s.plainId)).id }),
    cleanup: removeSession,
  },
  {
    service: SESSIONS,
    rpc: "GetSession",
    what: "of a person's session with its token (any authenticated caller)",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
    request: (s) => personsSession(s),
    cleanup: removeSession,
  },
  {
    service: SESSIONS,
    rpc: "GetSession",
    what: "of a person's session with a wrong token",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: async (s) => ({ id: (await personsSession(s)).id, sessionToken: "not-the-token" }),
    cleanup: removeSession,
  },
  {
    service: SESSIONS,
    rpc: "GetSession",
    what: "of no session",
    expect: [U, NF, NF, NF, D, D, D, D, D],
    request: () => ({ id: NO_SUCH_SESSION }),
  },
  {
    service: SESSIONS,
    rpc: "SearchSessions",
    what: "without filters (without session.read: the caller's own)",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
    request: async (s) => {
      await freshSession(s, s.plainId);
      return { query: { limit: 1000 } };
    },
    async check(s, r, outcome) {
      if (outcome !== OK) return;
      const rows = ((r as { message: JsonObject }).message.result ?? []) as JsonObject[];
      const ids = rows.map(detailsId);
      const userIds = new Set(rows.map((row) => String(((row.factors as JsonObject).user as JsonObject | undefined)?.id)));
      if (["system", "iamOwner", "iamViewer"].includes(s.column)) expect(ids, "every session").toContain(s.memo.session);
      else
        expect(
          [...userIds].filter((id) => id !== s.self),
          "only the caller's own sessions",
        ).toEqual([]);
      if (s.column === "plain") expect(ids, "the plain user's own session").toContain(s.memo.session);
    },
    cleanup: removeSession,
  },
  {
    service: SESSIONS,
    rpc: "PatchSession",
    what: "of a person's session, with its token (session.write)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ ...(await personsSession(s)), metadata: { matrix: "eA==" } }),
    check: sessionAfter((x) => x?.metadata, { matrix: "eA==" }, undefined),
    cleanup: removeSession,
  },
  {
    service: SESSIONS,
    rpc: "PatchSession",
    what: "of the plain user's session, with its token (no self)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ ...(await freshSession(s, s.plainId)), metadata: { matrix: "eA==" } }),
    check: sessionAfter((x) => x?.metadata, { matrix: "eA==" }, undefined),
    cleanup: removeSession,
  },
  {
    service: SESSIONS,
    rpc: "PatchSession",
    what: "of no session",
    expect: [U, NF, NF, D, D, D, D, D, D],
    request: () => ({ id: NO_SUCH_SESSION, sessionToken: "no-such-token" }),
  },
  {
    service: SESSIONS,
    rpc: "DeleteSession",
    what: "of a person's session (session.delete)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ id: (await personsSession(s)).id }),
    check: sessionAfter((x) => x !== undefined, false, true),
    cleanup: removeSession,
  },
  {
    service: SESSIONS,
    rpc: "DeleteSession",
    what: "of the plain user's session (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    request: async (s) => ({ id: (await freshSession(s, s.plainId)).id }),
    check: sessionAfter((x) => x !== undefined, false, true),
    cleanup: removeSession,
  },
  {
    service: SESSIONS,
    rpc: "DeleteSession",
    what: "of a person's session with its token (any authenticated caller)",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
    request: (s) => personsSession(s),
    check: sessionAfter((x) => x !== undefined, false, true),
    cleanup: removeSession,
  },
  {
    service: SESSIONS,
    rpc: "DeleteSession",
    what: "of no session",
    expect: [U, NF, NF, D, D, D, D, D, D],
    request: () => ({ id: NO_SUCH_SESSION }),
  },
  // PlatformIDPIntents: session.write to start one, session.read and its token to read it
  // (LOGIN_CLIENT: test/sessions/idp-intents.test.ts); no organization role holds either.
  {
    service: PlatformIDPIntents,
    rpc: "StartIDPIntent",
    what: "with a provider of the instance (session.write)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => intentStart(s),
    check: sentUpstream,
  },
  {
    service: PlatformIDPIntents,
    rpc: "StartIDPIntent",
    what: "with ctx of the organization acted in",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => intentStart(s, { orgId: s.org.id }),
    check: sentUpstream,
  },
  {
    service: PlatformIDPIntents,
    rpc: "RetrieveIDPIntent",
    what: "of a started intent with a wrong token (the token is needed beside session.read)",
    expect: [U, D, D, D, D, D, D, D, D],
    request: async (s) => ({
      id: detailsId(await must(s.admin(PlatformIDPIntents, "StartIDPIntent", await intentStart(s)), "admin StartIDPIntent")),
      idpIntentToken: "not-the-token",
    }),
  },
  {
    service: PlatformIDPIntents,
    rpc: "RetrieveIDPIntent",
    what: "of no intent",
    expect: [U, NF, NF, NF, D, D, D, D, D],
    request: () => ({ id: NO_SUCH_SESSION, idpIntentToken: "no-such-token" }),
  },
  // PlatformSMTPProviders and PlatformSMSProviders: instance-wide, no organization has any of it.
  ...providerRows("SMTP"),
  ...providerRows("SMS"),

  // PlatformUsers: user.* and user.credential.write in the user's organization; GetUser,
  // ListAuthMethods, SetPassword (with the current password) and the second factors on
  // oneself without them.
  {
    service: USERS,
    rpc: "CreateUser",
    what: "with ctx.orgId of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: (s) => withNewUser(s, { ctx: { orgId: s.org.id } }),
    check: userCreatedIn((s) => s.org.id),
  },
  {
    service: USERS,
    rpc: "CreateUser",
    what: "with ctx.orgDomain of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: (s) => withNewUser(s, { ctx: { orgDomain: s.org.primary } }),
    check: userCreatedIn((s) => s.org.id),
  },
  {
    service: USERS,
    rpc: "CreateUser",
    what: "without ctx (the default organization)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => withNewUser(s, {}),
    check: userCreatedIn((s) => s.defaultOrgId),
  },
  {
    service: USERS,
    rpc: "CreateUser",
    what: "with ctx.instanceId of its own instance (the default organization)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => withNewUser(s, { ctx: { instanceId: s.instanceId } }),
    check: userCreatedIn((s) => s.defaultOrgId),
  },
  {
    service: USERS,
    rpc: "CreateUser",
    what: "with ctx.orgId of no organization",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: (s) => withNewUser(s, { ctx: { orgId: NO_SUCH_ORG } }),
    check: userCreatedIn(() => "none"),
  },
  {
    service: USERS,
    rpc: "GetUser",
    what: "a user of the organization acted in",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    request: async (s) => ({ id: await freshUser(s) }),
    async check(s, r, outcome) {
      if (outcome === OK) expect(detailsId((r as { message: JsonObject }).message.user as JsonObject)).toBe(s.memo.user);
    },
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "GetUser",
    what: "a user of the organization acted in, with ctx.orgId of it",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    request: async (s) => ({ id: await freshUser(s), ctx: { orgId: s.org.id } }),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "GetUser",
    what: "a user of the organization acted in, with ctx.orgId of the other one",
    expect: [U, NF, NF, NF, NF, NF, NF, NF, D],
    request: async (s) => ({ id: await freshUser(s), ctx: { orgId: s.other.id } }),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "GetUser",
    what: "the caller itself (self)",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
    request: (s) => ({ id: s.self }),
    async check(s, r, outcome) {
      if (outcome === OK) expect(detailsId((r as { message: JsonObject }).message.user as JsonObject)).toBe(s.self);
    },
  },
  {
    service: USERS,
    rpc: "GetUser",
    what: "an id no user has",
    expect: [U, NF, NF, NF, NF, NF, NF, NF, D],
    request: () => ({ id: NO_SUCH_USER }),
  },
  {
    service: USERS,
    rpc: "SearchUsers",
    what: "without ctx",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, D],
    visible: ["-", "all", "all", "all", "A", "A", "A", "A", "-"],
    request: () => ({ query: { limit: 1000 } }),
  },
  {
    service: USERS,
    rpc: "SearchUsers",
    what: "with ctx.orgId of the organization acted in",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    visible: ["-", "A", "A", "A", "A", "-", "A", "-", "-"],
    request: (s) => ({ ctx: { orgId: s.org.id }, query: { limit: 1000 } }),
  },
  {
    service: USERS,
    rpc: "SearchUsers",
    what: "with ctx.orgId of no organization",
    expect: [U, NF, NF, NF, NF, NF, NF, NF, D],
    request: () => ({ ctx: { orgId: NO_SUCH_ORG } }),
  },
  {
    service: USERS,
    rpc: "PatchUser",
    what: "a user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s), user: { machine: { name: "matrix renamed" } } }),
    check: userAfter((u) => (u?.machine as JsonObject | undefined)?.name, "matrix renamed", "matrix"),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "PatchUser",
    what: "the caller itself (no self: its organization is the default one)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    async request(s) {
      s.memo.user = s.self;
      s.memo.nick = s.unique("nick");
      const user: JsonObject = s.self === s.plainId ? { human: { nickName: s.memo.nick } } : { machine: { description: s.memo.nick } };
      return { id: s.self, user };
    },
    async check(s, _r, outcome) {
      const u = await userAsAdminSees(s, s.self);
      const seen = s.self === s.plainId ? ((u?.human as JsonObject).profile as JsonObject).nickName : (u?.machine as JsonObject).description;
      if (outcome === OK) expect(seen).toBe(s.memo.nick);
      else expect(seen).not.toBe(s.memo.nick);
    },
  },
  {
    service: USERS,
    rpc: "PatchUser",
    what: "an id no user has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ id: NO_SUCH_USER, user: { username: "nobody" } }),
  },
  {
    service: USERS,
    rpc: "DeleteUser",
    what: "a user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s) }),
    check: userAfter((u) => u !== undefined, false, true),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "DeleteUser",
    what: "a user of the other organization, with ctx.orgId of the one acted in",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: async (s) => ({ id: await freshUser(s, "machine", s.other.id), ctx: { orgId: s.org.id } }),
    check: userAfter((u) => u !== undefined, true, true),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "DeleteUser",
    what: "an id no user has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ id: NO_SUCH_USER }),
  },
  {
    service: USERS,
    rpc: "SetPassword",
    what: "of a person of the organization acted in, without current password",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s, "human"), password: { newPassword: PLAIN_PASSWORD } }),
    check: userAfter((u) => (u?.human as JsonObject | undefined)?.hasPassword ?? false, true, false),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "SetPassword",
    what: "of the plain user, with its current password (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    async request(s) {
      s.memo.user = s.plainId;
      s.memo.before = String(((await userAsAdminSees(s, s.plainId))!.human as JsonObject).passwordChanged);
      return { id: s.plainId, password: { newPassword: PLAIN_PASSWORD, currentPassword: PLAIN_PASSWORD } };
    },
    async check(s, _r, outcome) {
      const changed = String(((await userAsAdminSees(s, s.plainId))!.human as JsonObject).passwordChanged);
      if (outcome === OK) expect(changed, "passwordChanged afterwards").not.toBe(s.memo.before);
      else expect(changed, "passwordChanged afterwards").toBe(s.memo.before);
    },
  },
  {
    service: USERS,
    rpc: "SetPassword",
    what: "of the plain user, without current password (required of users acting on themselves)",
    expect: [U, OK, OK, D, D, D, D, D, IA],
    request: (s) => ({ id: s.plainId, password: { newPassword: PLAIN_PASSWORD } }),
  },
  {
    service: USERS,
    rpc: "SetPassword",
    what: "of the plain user, with a wrong current password (checked whenever given)",
    expect: [U, IA, IA, D, D, D, D, D, IA],
    request: (s) => ({ id: s.plainId, password: { newPassword: PLAIN_PASSWORD, currentPassword: "Wrong-Pa55word!" } }),
  },
  {
    service: USERS,
    rpc: "SetPassword",
    what: "of the plain user, requiring a change at the next sign-in (administrators only)",
    expect: [U, OK, OK, D, D, D, D, D, IA],
    request: (s) => ({ id: s.plainId, password: { newPassword: PLAIN_PASSWORD, currentPassword: PLAIN_PASSWORD, changeRequired: true } }),
    async cleanup(s) {
      await must(s.admin(USERS, "SetPassword", { id: s.plainId, password: { newPassword: PLAIN_PASSWORD } }), "admin clears the required change");
    },
  },
  {
    service: USERS,
    rpc: "SetPassword",
    what: "an id no user has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ id: NO_SUCH_USER, password: { newPassword: PLAIN_PASSWORD } }),
  },
  {
    service: USERS,
    rpc: "VerifyEmail",
    what: "of a person of the organization acted in, with its code",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s, "human");
      const { code } = await must(s.admin(USERS, "ResendEmailCode", { id, returnCode: true }), "admin ResendEmailCode");
      return { id, verification: { code } };
    },
    check: userAfter((u) => ((u?.human as JsonObject | undefined)?.email as JsonObject | undefined)?.isVerified ?? false, true, false),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "VerifyEmail",
    what: "the plain user's own, with its code (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    async request(s) {
      s.memo.user = s.plainId;
      const changed = await must(
        s.admin(USERS, "PatchUser", { id: s.plainId, user: { human: { email: { address: `${s.unique("plain")}@mail.example` } } }, returnCode: true }),
        "admin PatchUser",
      );
      return { id: s.plainId, verification: { code: String(changed.emailCode) } };
    },
    check: userAfter((u) => ((u?.human as JsonObject | undefined)?.email as JsonObject | undefined)?.isVerified ?? false, true, false),
  },
  {
    service: USERS,
    rpc: "VerifyEmail",
    what: "an id no user has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ id: NO_SUCH_USER, verification: { code: "ACDEFGHJ" } }),
  },
  {
    service: USERS,
    rpc: "ResendEmailCode",
    what: "of a person of the organization acted in, answering the code",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s, "human"), returnCode: true }),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "ResendEmailCode",
    what: "the plain user's own, answering the code (return_code is not for self)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ ...(await unverifiedPlain(s)), returnCode: true }),
  },
  {
    service: USERS,
    rpc: "ResendEmailCode",
    what: "the plain user's own, sent (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    request: unverifiedPlain,
  },
  {
    service: USERS,
    rpc: "ResendEmailCode",
    what: "an id no user has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ id: NO_SUCH_USER }),
  },
  {
    service: USERS,
    rpc: "VerifyPhone",
    what: "of a person of the organization acted in, with a phone number and its code",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s, "human");
      const changed = await must(
        s.admin(USERS, "PatchUser", { id, user: { human: { phone: { number: "+41790000001" } } }, returnCode: true }),
        "admin PatchUser",
      );
      return { id, verification: { code: String(changed.phoneCode) } };
    },
    check: userAfter((u) => ((u?.human as JsonObject | undefined)?.phone as JsonObject | undefined)?.isVerified ?? false, true, false),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "ResendPhoneCode",
    what: "of a person without a phone number",
    expect: [U, FP, FP, D, FP, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s, "human") }),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "ResetPassword",
    what: "of a person of the organization acted in, answering the code",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s, "human"), returnCode: true }),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "ResetPassword",
    what: "of the plain user, answering the code (return_code is not for self)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => ({ id: s.plainId, returnCode: true }),
  },
  {
    service: USERS,
    rpc: "ResetPassword",
    what: "of the plain user, sent (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    request: (s) => ({ id: s.plainId }),
  },
  {
    service: USERS,
    rpc: "ResetPassword",
    what: "an id no user has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ id: NO_SUCH_USER }),
  },
  {
    service: USERS,
    rpc: "SetPassword",
    what: "of the plain user, with a reset code instead of its current password (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    async request(s) {
      const { code } = await must(s.admin(USERS, "ResetPassword", { id: s.plainId, returnCode: true }), "admin ResetPassword");
      return { id: s.plainId, password: { newPassword: PLAIN_PASSWORD, verificationCode: String(code) } };
    },
  },
  {
    service: USERS,
    rpc: "ResendInvite",
    what: "of a person of the organization acted in without a password, answering the code",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s, "human"), returnCode: true }),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "ResendInvite",
    what: "of the plain user, who has a password (no self)",
    expect: [U, FP, FP, D, D, D, D, D, D],
    request: (s) => ({ id: s.plainId }),
  },
  {
    service: USERS,
    rpc: "LockUser",
    what: "an active user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s) }),
    check: stateAfter("USER_STATE_LOCKED", "USER_STATE_ACTIVE"),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "LockUser",
    what: "an id no user has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ id: NO_SUCH_USER }),
  },
  {
    service: USERS,
    rpc: "UnlockUser",
    what: "a locked user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s);
      await must(s.admin(USERS, "LockUser", { id }), "admin LockUser");
      return { id };
    },
    check: stateAfter("USER_STATE_ACTIVE", "USER_STATE_LOCKED"),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "DeactivateUser",
    what: "an active user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s) }),
    check: stateAfter("USER_STATE_INACTIVE", "USER_STATE_ACTIVE"),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "ReactivateUser",
    what: "a deactivated user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s);
      await must(s.admin(USERS, "DeactivateUser", { id }), "admin DeactivateUser");
      return { id };
    },
    check: stateAfter("USER_STATE_ACTIVE", "USER_STATE_INACTIVE"),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "AddPersonalAccessToken",
    what: "for a user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s), pat: { expirationDate: tomorrow() } }),
    async check(s, r, outcome) {
      expect(await credentialCount(s, "SearchPersonalAccessTokens"), "tokens afterwards").toBe(outcome === OK ? 1 : 0);
      if (outcome !== OK) return;
      // The new token is the user's: it reads the user itself.
      const token = String((r as { message: JsonObject }).message.token);
      const self = await protocolClient(USERS, "grpc", s.baseUrl).call("GetUser", { id: s.memo.user! }, token);
      expect(self, "the new token works").toMatchObject({ ok: true });
    },
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "AddPersonalAccessToken",
    what: "for the caller itself (no self)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: (s) => ({ id: s.self, pat: { expirationDate: tomorrow() } }),
  },
  {
    service: USERS,
    rpc: "SearchPersonalAccessTokens",
    what: "of a user of the organization acted in",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    async request(s) {
      const id = await freshUser(s);
      await must(s.admin(USERS, "AddPersonalAccessToken", { id, pat: { expirationDate: tomorrow() } }), "admin AddPersonalAccessToken");
      return { id };
    },
    async check(_s, r, outcome) {
      if (outcome === OK) expect(((r as { message: JsonObject }).message.result as JsonObject[]).length).toBe(1);
    },
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "SearchPersonalAccessTokens",
    what: "of the caller itself (no self)",
    expect: [U, OK, OK, OK, D, D, D, D, D],
    request: (s) => ({ id: s.self }),
  },
  {
    service: USERS,
    rpc: "DeletePersonalAccessToken",
    what: "a token of a user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s);
      const pat = await must(s.admin(USERS, "AddPersonalAccessToken", { id, pat: { expirationDate: tomorrow() } }), "admin AddPersonalAccessToken");
      return { id, patId: detailsId(pat) };
    },
    check: credentialsAfter("SearchPersonalAccessTokens", 0, 1),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "DeletePersonalAccessToken",
    what: "a token of a user of the other organization, named with the user of the one acted in",
    expect: [U, NF, NF, D, NF, D, D, D, D],
    async request(s) {
      const theirs = await freshUser(s, "machine", s.other.id);
      const pat = await must(s.admin(USERS, "AddPersonalAccessToken", { id: theirs, pat: { expirationDate: tomorrow() } }), "admin AddPersonalAccessToken");
      s.memo.other = theirs;
      return { id: await freshUser(s), patId: detailsId(pat) };
    },
    async check(s) {
      const found = await must(s.admin(USERS, "SearchPersonalAccessTokens", { id: s.memo.other! }), "admin SearchPersonalAccessTokens");
      expect(Number((found.details as JsonObject).totalResult), "the other user's token stays").toBe(1);
    },
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "AddKey",
    what: "a generated EC key for a machine user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s), key: { generate: "KEY_TYPE_EC", expirationDate: tomorrow() } }),
    check: credentialsAfter("SearchKeys", 1, 0),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "SearchKeys",
    what: "of a machine user of the organization acted in",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    async request(s) {
      const id = await freshUser(s);
      await must(s.admin(USERS, "AddKey", { id, key: { generate: "KEY_TYPE_EC", expirationDate: tomorrow() } }), "admin AddKey");
      return { id };
    },
    async check(_s, r, outcome) {
      if (outcome === OK) expect(((r as { message: JsonObject }).message.result as JsonObject[]).length).toBe(1);
    },
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "DeleteKey",
    what: "a key of a machine user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s);
      const key = await must(s.admin(USERS, "AddKey", { id, key: { generate: "KEY_TYPE_EC", expirationDate: tomorrow() } }), "admin AddKey");
      return { id, keyId: detailsId(key) };
    },
    check: credentialsAfter("SearchKeys", 0, 1),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "SetMetadata",
    what: "on a user of the organization acted in (user.write)",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s), metadata: [{ key: "matrix", value: "dg==" }] }),
    check: credentialsAfter("SearchMetadata", 1, 0),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "GetMetadata",
    what: "of a user of the organization acted in (user.read)",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    async request(s) {
      const id = await freshUser(s);
      await must(s.admin(USERS, "SetMetadata", { id, metadata: [{ key: "matrix", value: "dg==" }] }), "admin SetMetadata");
      return { id, key: "matrix" };
    },
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "SearchMetadata",
    what: "of a user of the organization acted in (user.read)",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    async request(s) {
      const id = await freshUser(s);
      await must(s.admin(USERS, "SetMetadata", { id, metadata: [{ key: "matrix", value: "dg==" }] }), "admin SetMetadata");
      return { id };
    },
    async check(_s, r, outcome) {
      if (outcome === OK) expect(((r as { message: JsonObject }).message.result as JsonObject[]).length).toBe(1);
    },
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "DeleteMetadata",
    what: "of a user of the organization acted in (user.write)",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s);
      await must(s.admin(USERS, "SetMetadata", { id, metadata: [{ key: "matrix", value: "dg==" }] }), "admin SetMetadata");
      return { id, key: "matrix" };
    },
    check: credentialsAfter("SearchMetadata", 0, 1),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "GenerateSecret",
    what: "for a machine user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s) }),
    check: userAfter((u) => (u?.machine as JsonObject | undefined)?.hasSecret ?? false, true, false),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "GenerateSecret",
    what: "an id no user has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ id: NO_SUCH_USER }),
  },
  {
    service: USERS,
    rpc: "RemoveSecret",
    what: "of a machine user of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s);
      await must(s.admin(USERS, "GenerateSecret", { id }), "admin GenerateSecret");
      return { id };
    },
    check: userAfter((u) => (u?.machine as JsonObject | undefined)?.hasSecret ?? false, false, true),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "ListIDPLinks",
    what: "of a person of the organization acted in (user.read)",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    async request(s) {
      const id = await freshUser(s, "human");
      await s.linkAccount(id);
      return { id };
    },
    async check(_s, r, outcome) {
      if (outcome === OK) expect(((r as { message: JsonObject }).message.result as JsonObject[]).length).toBe(1);
    },
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "ListIDPLinks",
    what: "of the caller itself (self)",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
    request: (s) => ({ id: s.self }),
  },
  {
    service: USERS,
    rpc: "ListIDPLinks",
    what: "an id no user has",
    expect: [U, NF, NF, NF, NF, NF, NF, NF, D],
    request: () => ({ id: NO_SUCH_USER }),
  },
  {
    service: USERS,
    rpc: "DeleteIDPLink",
    what: "a link of a person of the organization acted in (user.write)",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s, "human");
      return { id, ...(await s.linkAccount(id)) };
    },
    check: credentialsAfter("ListIDPLinks", 0, 1),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "DeleteIDPLink",
    what: "a link of a person of the other organization, named with a person of the one acted in",
    expect: [U, NF, NF, D, NF, D, D, D, D],
    async request(s) {
      const theirs = await freshUser(s, "human", s.other.id);
      const link = await s.linkAccount(theirs);
      s.memo.other = theirs;
      return { id: await freshUser(s, "human"), ...link };
    },
    async check(s) {
      const found = await must(s.admin(USERS, "ListIDPLinks", { id: s.memo.other! }), "admin ListIDPLinks");
      expect(Number((found.details as JsonObject).totalResult), "the other person's link stays").toBe(1);
    },
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "DeleteIDPLink",
    what: "the plain user's own link (self)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    async request(s) {
      s.memo.user = s.plainId;
      const link = await s.linkAccount(s.plainId);
      s.memo.link = JSON.stringify(link);
      return { id: s.plainId, ...link };
    },
    check: credentialsAfter("ListIDPLinks", 0, 1),
    async cleanup(s) {
      await s.admin(USERS, "DeleteIDPLink", { id: s.plainId, ...(JSON.parse(s.memo.link!) as JsonObject) });
    },
  },
  {
    service: USERS,
    rpc: "DeleteIDPLink",
    what: "an id no user has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ id: NO_SUCH_USER, idpId: "no-such-idp", externalUserId: "no-such-account" }),
  },

  // Second factors: user.credential.write, self for people; ListAuthMethods user.read, self.
  {
    service: USERS,
    rpc: "AddTOTP",
    what: "for a person of the organization acted in (user.credential.write)",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s, "human") }),
    check: answeredSecretPending,
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "AddTOTP",
    what: "for the plain user (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    request: (s) => {
      s.memo.user = s.plainId;
      return { id: s.plainId };
    },
    check: answeredSecretPending,
    cleanup: plainWithout("RemoveTOTP"),
  },
  {
    service: USERS,
    rpc: "AddTOTP",
    what: "for a machine user (people only)",
    expect: [U, FP, FP, D, FP, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s) }),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "AddTOTP",
    what: "an id no user has",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: () => ({ id: NO_SUCH_USER }),
  },
  {
    service: USERS,
    rpc: "VerifyTOTP",
    what: "of a person of the organization acted in, with a code of its pending authenticator",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s, "human");
      return { id, verification: { code: totpCode(await adminTotp(s, id, false)) } };
    },
    check: methodsAfter(["TOTP"], []),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "VerifyTOTP",
    what: "the plain user's own pending authenticator (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    async request(s) {
      s.memo.user = s.plainId;
      return { id: s.plainId, verification: { code: totpCode(await adminTotp(s, s.plainId, false)) } };
    },
    check: methodsAfter(["PASSWORD", "TOTP"], ["PASSWORD"]),
    cleanup: plainWithout("RemoveTOTP"),
  },
  {
    service: USERS,
    rpc: "RemoveTOTP",
    what: "of a person of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s, "human");
      await adminTotp(s, id, true);
      return { id };
    },
    check: methodsAfter([], ["TOTP"]),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "RemoveTOTP",
    what: "the plain user's own (self for the plain user; no second factor forced)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    async request(s) {
      s.memo.user = s.plainId;
      await adminTotp(s, s.plainId, true);
      return { id: s.plainId };
    },
    check: methodsAfter(["PASSWORD"], ["PASSWORD", "TOTP"]),
    cleanup: plainWithout("RemoveTOTP"),
  },
  {
    service: USERS,
    rpc: "AddOTPEmail",
    what: "for a person of the organization acted in, with a verified email address",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await verifiedPerson(s) }),
    check: methodsAfter(["OTP_EMAIL"], []),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "AddOTPEmail",
    what: "for a person whose email address is not verified",
    expect: [U, FP, FP, D, FP, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s, "human") }),
    check: methodsAfter([], []),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "AddOTPEmail",
    what: "for the plain user, its email address verified (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    request: async (s) => ({ id: await verifiedPlain(s) }),
    check: methodsAfter(["PASSWORD", "OTP_EMAIL"], ["PASSWORD"]),
    cleanup: plainWithout("RemoveOTPEmail"),
  },
  {
    service: USERS,
    rpc: "RemoveOTPEmail",
    what: "of a person of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await verifiedPerson(s);
      await must(s.admin(USERS, "AddOTPEmail", { id }), "admin AddOTPEmail");
      return { id };
    },
    check: methodsAfter([], ["OTP_EMAIL"]),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "RemoveOTPEmail",
    what: "the plain user's own (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    async request(s) {
      await must(s.admin(USERS, "AddOTPEmail", { id: await verifiedPlain(s) }), "admin AddOTPEmail");
      return { id: s.plainId };
    },
    check: methodsAfter(["PASSWORD"], ["PASSWORD", "OTP_EMAIL"]),
    cleanup: plainWithout("RemoveOTPEmail"),
  },
  {
    service: USERS,
    rpc: "AddOTPSMS",
    what: "for a person of the organization acted in, with a verified phone number",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await verifiedPerson(s) }),
    check: methodsAfter(["OTP_SMS"], []),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "AddOTPSMS",
    what: "for the plain user, its phone number verified (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    request: async (s) => ({ id: await verifiedPlain(s) }),
    check: methodsAfter(["PASSWORD", "OTP_SMS"], ["PASSWORD"]),
    cleanup: plainWithout("RemoveOTPSMS"),
  },
  {
    service: USERS,
    rpc: "RemoveOTPSMS",
    what: "of a person of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await verifiedPerson(s);
      await must(s.admin(USERS, "AddOTPSMS", { id }), "admin AddOTPSMS");
      return { id };
    },
    check: methodsAfter([], ["OTP_SMS"]),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "RemoveOTPSMS",
    what: "the plain user's own (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    async request(s) {
      await must(s.admin(USERS, "AddOTPSMS", { id: await verifiedPlain(s) }), "admin AddOTPSMS");
      return { id: s.plainId };
    },
    check: methodsAfter(["PASSWORD"], ["PASSWORD", "OTP_SMS"]),
    cleanup: plainWithout("RemoveOTPSMS"),
  },
  {
    service: USERS,
    rpc: "GenerateRecoveryCodes",
    what: "for a person of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ id: await freshUser(s, "human") }),
    check: methodsAfter(["RECOVERY_CODES"], []),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "GenerateRecoveryCodes",
    what: "for the plain user (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    request: (s) => {
      s.memo.user = s.plainId;
      return { id: s.plainId };
    },
    check: methodsAfter(["PASSWORD", "RECOVERY_CODES"], ["PASSWORD"]),
    cleanup: plainWithout("RemoveRecoveryCodes"),
  },
  {
    service: USERS,
    rpc: "RemoveRecoveryCodes",
    what: "of a person of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    async request(s) {
      const id = await freshUser(s, "human");
      await must(s.admin(USERS, "GenerateRecoveryCodes", { id }), "admin GenerateRecoveryCodes");
      return { id };
    },
    check: methodsAfter([], ["RECOVERY_CODES"]),
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "RemoveRecoveryCodes",
    what: "the plain user's own (self for the plain user)",
    expect: [U, OK, OK, D, D, D, D, D, OK],
    async request(s) {
      s.memo.user = s.plainId;
      await must(s.admin(USERS, "GenerateRecoveryCodes", { id: s.plainId }), "admin GenerateRecoveryCodes");
      return { id: s.plainId };
    },
    check: methodsAfter(["PASSWORD"], ["PASSWORD", "RECOVERY_CODES"]),
    cleanup: plainWithout("RemoveRecoveryCodes"),
  },
  {
    service: USERS,
    rpc: "ListAuthMethods",
    what: "of a person of the organization acted in (user.read)",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    async request(s) {
      const id = await freshUser(s, "human");
      await must(s.admin(USERS, "GenerateRecoveryCodes", { id }), "admin GenerateRecoveryCodes");
      return { id };
    },
    async check(_s, r, outcome) {
      if (outcome === OK) expect((r as { message: JsonObject }).message.authMethodTypes).toEqual(["AUTH_METHOD_TYPE_RECOVERY_CODES"]);
    },
    cleanup: removeUser,
  },
  {
    service: USERS,
    rpc: "ListAuthMethods",
    what: "of the caller itself (self)",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
    request: (s) => ({ id: s.self }),
    async check(s, r, outcome) {
      if (outcome === OK)
        expect((r as { message: JsonObject }).message.authMethodTypes ?? []).toEqual(s.self === s.plainId ? ["AUTH_METHOD_TYPE_PASSWORD"] : []);
    },
  },
  {
    service: USERS,
    rpc: "ListAuthMethods",
    what: "an id no user has",
    expect: [U, NF, NF, NF, NF, NF, NF, NF, D],
    request: () => ({ id: NO_SUCH_USER }),
  },

  // Passkeys and security keys: user.credential.write, self for people; their lists user.read, self.
  ...webAuthnKeyRows("passkey"),
  ...webAuthnKeyRows("u2f"),

  // PlatformMemberships: member.* where the membership is; system roles for system members.
  {
    service: MEMBERS,
    rpc: "CreateMembership",
    what: "ORG_OWNER_VIEWER with ctx.orgId of the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ membership: { userId: await member(s, [], undefined), roles: ["ORG_OWNER_VIEWER"] }, ctx: inOrgActedIn(s) }),
    check: rolesAfter(inOrgActedIn, ["ORG_OWNER_VIEWER"], undefined),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "CreateMembership",
    what: "IAM_OWNER_VIEWER without ctx (the instance)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ membership: { userId: await member(s, [], undefined), roles: ["IAM_OWNER_VIEWER"] } }),
    check: rolesAfter(inInstance, ["IAM_OWNER_VIEWER"], undefined),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "CreateMembership",
    what: "SYSTEM_OWNER with ctx.system",
    expect: [U, OK, D, D, D, D, D, D, D],
    request: async (s) => ({ membership: { userId: await member(s, [], undefined), roles: ["SYSTEM_OWNER"] }, ctx: inSystem() }),
    check: rolesAfter(inSystem, ["SYSTEM_OWNER"], undefined),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "CreateMembership",
    what: "ORG_OWNER with ctx.orgId of no organization",
    expect: [U, NF, NF, D, NF, NF, D, D, D],
    request: async (s) => ({ membership: { userId: await member(s, [], undefined), roles: ["ORG_OWNER"] }, ctx: { orgId: NO_SUCH_ORG } }),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "CreateMembership",
    what: "ORG_OWNER in the organization acted in, for an id no user has",
    expect: [U, NF, NF, D, NF, D, D, D, D],
    request: (s) => ({ membership: { userId: NO_SUCH_USER, roles: ["ORG_OWNER"] }, ctx: inOrgActedIn(s) }),
  },
  {
    service: MEMBERS,
    rpc: "PatchMembership",
    what: "ORG_OWNER_VIEWER to ORG_OWNER in the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ userId: await member(s, ["ORG_OWNER_VIEWER"], inOrgActedIn(s)), membership: { roles: ["ORG_OWNER"] }, ctx: inOrgActedIn(s) }),
    check: rolesAfter(inOrgActedIn, ["ORG_OWNER"], ["ORG_OWNER_VIEWER"]),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "PatchMembership",
    what: "IAM_OWNER_VIEWER to IAM_OWNER in the instance (no ctx)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ userId: await member(s, ["IAM_OWNER_VIEWER"], undefined), membership: { roles: ["IAM_OWNER"] } }),
    check: rolesAfter(inInstance, ["IAM_OWNER"], ["IAM_OWNER_VIEWER"]),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "PatchMembership",
    what: "a SYSTEM_OWNER's roles, with ctx.system",
    expect: [U, OK, D, D, D, D, D, D, D],
    request: async (s) => ({ userId: await member(s, ["SYSTEM_OWNER"], inSystem()), membership: { roles: ["SYSTEM_OWNER"] }, ctx: inSystem() }),
    check: rolesAfter(inSystem, ["SYSTEM_OWNER"], ["SYSTEM_OWNER"]),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "DeleteMembership",
    what: "in the organization acted in",
    expect: [U, OK, OK, D, OK, D, D, D, D],
    request: async (s) => ({ userId: await member(s, ["ORG_OWNER_VIEWER"], inOrgActedIn(s)), ctx: inOrgActedIn(s) }),
    check: rolesAfter(inOrgActedIn, undefined, ["ORG_OWNER_VIEWER"]),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "DeleteMembership",
    what: "in the instance (no ctx)",
    expect: [U, OK, OK, D, D, D, D, D, D],
    request: async (s) => ({ userId: await member(s, ["IAM_OWNER_VIEWER"], undefined) }),
    check: rolesAfter(inInstance, undefined, ["IAM_OWNER_VIEWER"]),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "DeleteMembership",
    what: "a SYSTEM_OWNER's, with ctx.system",
    expect: [U, OK, D, D, D, D, D, D, D],
    request: async (s) => ({ userId: await member(s, ["SYSTEM_OWNER"], inSystem()), ctx: inSystem() }),
    check: rolesAfter(inSystem, undefined, ["SYSTEM_OWNER"]),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "DeleteMembership",
    what: "of a user without membership in the organization acted in",
    expect: [U, NF, NF, D, NF, D, D, D, D],
    request: async (s) => ({ userId: await member(s, ["IAM_OWNER_VIEWER"], undefined), ctx: inOrgActedIn(s) }),
    check: rolesAfter(inInstance, ["IAM_OWNER_VIEWER"], ["IAM_OWNER_VIEWER"]),
    cleanup: removeUser,
  },
  {
    service: MEMBERS,
    rpc: "SearchMemberships",
    what: "without ctx",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, D],
    visible: ["-", "all", "all", "all", "A", "A", "A", "A", "-"],
    request: () => ({ query: { limit: 1000 } }),
  },
  {
    service: MEMBERS,
    rpc: "SearchMemberships",
    what: "with ctx.orgId of the organization acted in",
    expect: [U, OK, OK, OK, OK, D, OK, D, D],
    visible: ["-", "A", "A", "A", "A", "-", "A", "-", "-"],
    request: (s) => ({ ctx: inOrgActedIn(s), query: { limit: 1000 } }),
  },
  {
    service: MEMBERS,
    rpc: "SearchMemberships",
    what: "with ctx.system",
    expect: [U, OK, D, D, D, D, D, D, D],
    visible: ["-", "sys", "-", "-", "-", "-", "-", "-", "-"],
    request: () => ({ ctx: inSystem(), query: { limit: 1000 } }),
  },
  {
    service: MEMBERS,
    rpc: "SearchMemberships",
    what: "with ctx.orgId of no organization",
    expect: [U, NF, NF, NF, NF, NF, NF, NF, D],
    request: () => ({ ctx: { orgId: NO_SUCH_ORG } }),
  },
  {
    service: MEMBERS,
    rpc: "ListAvailableRoles",
    what: "without ctx (any authenticated caller)",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
    request: () => ({}),
    check: roleNamesAre(["IAM_OWNER", "IAM_OWNER_VIEWER", "LOGIN_CLIENT"]),
  },
  {
    service: MEMBERS,
    rpc: "ListAvailableRoles",
    what: "with ctx.orgId of the organization acted in (any authenticated caller)",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
    request: (s) => ({ ctx: inOrgActedIn(s) }),
    check: roleNamesAre(["ORG_OWNER", "ORG_OWNER_VIEWER"]),
  },
  {
    service: MEMBERS,
    rpc: "ListAvailableRoles",
    what: "with ctx.system (system members only)",
    expect: [U, OK, D, D, D, D, D, D, D],
    request: () => ({ ctx: inSystem() }),
    check: roleNamesAre(["SYSTEM_OWNER"]),
  },
  {
    service: MEMBERS,
    rpc: "ListAvailableRoles",
    what: "with ctx.orgId of no organization",
    expect: [U, NF, NF, NF, NF, NF, NF, NF, NF],
    request: () => ({ ctx: { orgId: NO_SUCH_ORG } }),
  },
  {
    service: MEMBERS,
    rpc: "ListMyPermissions",
    what: "without ctx (any authenticated caller, for itself)",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
    request: () => ({}),
  },
  {
    service: MEMBERS,
    rpc: "ListMyPermissions",
    what: "with ctx.orgId of the organization acted in (any authenticated caller)",
    expect: [U, OK, OK, OK, OK, OK, OK, OK, OK],
    request: (s) => ({ ctx: inOrgActedIn(s) }),
  },
  {
    service: MEMBERS,
    rpc: "ListMyPermissions",
    what: "with ctx.system (system members only)",
    expect: [U, OK, D, D, D, D, D, D, D],
    request: () => ({ ctx: inSystem() }),
  },
  {
    service: MEMBERS,
    rpc: "ListMyPermissions",
    what: "with ctx.orgId of no organization",
    expect: [U, NF, NF, NF, NF, NF, NF, NF, NF],
    request: () => ({ ctx: { orgId: NO_SUCH_ORG } }),
  },
];

const HTTP_STATUS: Record<Outcome, number> = { ok: 0, denied: 403, unauth: 401, notfound: 404, failed: 400, invalid: 400 };

function outcomeOf(r: CallResult): string {
  if (r.ok) return OK;
  switch (r.code) {
    case Code.PermissionDenied:
      return D;
    case Code.Unauthenticated:
      return U;
    case Code.NotFound:
      return NF;
    case Code.FailedPrecondition:
      return FP;
    case Code.InvalidArgument:
      return IA;
    default:
      return `${Code[r.code]}`;
  }
}

describe("the expected table", () => {
  it("has a row for every RPC of the ten services, and a cell for every column", () => {
    for (const service of [
      ORGS,
      DOMAINS,
      ACTIONS,
      USERS,
      MEMBERS,
      PlatformSMTPProviders,
      PlatformSMSProviders,
      PlatformNotifications,
      PlatformAuthRequests,
      SESSIONS,
    ]) {
      for (const method of service.methods) {
        expect(
          ROWS.some((r) => r.service === service && r.rpc === method.name),
          `${service.name}.${method.name}`,
        ).toBe(true);
      }
    }
    for (const row of ROWS) {
      expect(row.expect, `${row.rpc} ${row.what}`).toHaveLength(COLUMNS.length);
      if (row.visible) expect(row.visible).toHaveLength(COLUMNS.length);
      expect(
        row.service.methods.some((m) => m.name === row.rpc),
        row.rpc,
      ).toBe(true);
    }
  });
});

describe.each(DATABASE_KINDS)("authorization matrix (%s)", (kind) => {
  let server: TestServer;
  let a: Org;
  let b: Org;
  let targetId: string;
  let plainId: string;
  /** The fixture identity provider (GitLab, of the instance) links are made to. */
  let idpId: string;
  /** A user of A and one of B, each with a membership there. */
  let userInA: string;
  let userInB: string;
  const tokens = new Map<Column, string | undefined>();
  const userIds = new Map<Column, string>();
  /** Answers ValidateDomain's TXT questions, so that its rows never leave the machine. */
  const dns = new TestDnsServer();
  let counter = 0;
  const unique = (prefix: string) => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 7)}`;
  const admin = (service: DescService, rpc: string, req: JsonObject) => protocolClient(service, "grpc", server.baseUrl).call(rpc, req, server.adminToken);

  /**
   * Written into the outbox as a worker leaves a delivered row: a real one needs a reachable
   * target, which this server (no private addresses) has not. Its event does not exist, so a
   * retried row fails at its next attempt without any call.
   */
  async function deliveredDelivery(): Promise<string> {
    const id = unique("matrix-delivery");
    const now = new Date();
    await server.service.store.db
      .insertInto("action_deliveries")
      .values({
        instance_id: server.instanceId,
        id,
        event_position: 0,
        event_type: "target.changed",
        aggregate_type: "target",
        aggregate_id: id,
        event_sequence: 1,
        target_id: targetId,
        execution_id: "event/target.changed",
        status: "delivered",
        attempts: 1,
        next_attempt_at: now,
        created_at: now,
        window_start: now,
        delivered_at: now,
      })
      .execute();
    return id;
  }

  async function linkAccountOf(userId: string) {
    const link = { idpId, externalUserId: unique("matrix-account") };
    await linkAccount(server, server.instanceId, userId, { ...link, username: link.externalUserId, email: `${link.externalUserId}@mail.example` });
    return link;
  }

  async function createOrg(name: string): Promise<Org> {
    const made = await must(admin(ORGS, "CreateOrganization", { organization: { name } }), `admin creates ${name}`);
    return { id: String((made.details as JsonObject).id), primary: String(made.primaryDomain) };
  }

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_DNS_SERVERS: await dns.start(), PLATFORM_PASSWORD_RESET_INTERVAL: "0s" });
    a = await createOrg("Matrix A");
    b = await createOrg("Matrix B");
    await must(admin(DOMAINS, "AddDomain", { domain: { domain: "added-a.matrix.example" }, ctx: { orgId: a.id } }), "A's added domain");
    await must(admin(DOMAINS, "AddDomain", { domain: { domain: "added-b.matrix.example" }, ctx: { orgId: b.id } }), "B's added domain");
    const target = await admin(ACTIONS, "CreateTarget", { target: { name: "matrix-fixture", restWebhook: { url: "https://example.com/f" } } });
    expect(target.ok).toBe(true);
    targetId = idOf(target);
    idpId = idOf(await admin(PlatformIdentityProviders, "CreateGitLabIDP", { idp: gitlab("Matrix GitLab") }));
    const user = async (columns: Column[], roles: Parameters<TestServer["createUser"]>[0]["roles"]) => {
      const made = await server.createUser({ roles });
      for (const column of columns) {
        tokens.set(column, made.token);
        userIds.set(column, made.userId);
      }
    };
    tokens.set("none", undefined);
    await user(["system"], [{ context: "system", roles: ["SYSTEM_OWNER"] }]);
    await user(["iamOwner"], [{ context: "instance", roles: ["IAM_OWNER"] }]);
    await user(["iamViewer"], [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }]);
    await user(["ownerInA", "ownerInB"], [{ context: "org", contextId: a.id, roles: ["ORG_OWNER"] }]);
    await user(["viewerInA", "viewerInB"], [{ context: "org", contextId: a.id, roles: ["ORG_OWNER_VIEWER"] }]);
    // The plain user is a person with a password (SetPassword on itself), made through the API.
    const plain = await must(
      admin(USERS, "CreateUser", {
        user: {
          username: "matrix-plain",
          human: { profile: { givenName: "Plain", familyName: "User" }, email: { address: "plain@mail.example" }, password: PLAIN_PASSWORD },
        },
      }),
      "admin creates the plain user",
    );
    plainId = detailsId(plain);
    const pat = await must(admin(USERS, "AddPersonalAccessToken", { id: plainId, pat: { expirationDate: tomorrow() } }), "the plain user's token");
    tokens.set("plain", String(pat.token));
    userIds.set("plain", plainId);
    for (const [org, name] of [
      [a, "matrix-in-a"],
      [b, "matrix-in-b"],
    ] as const) {
      const made = await must(admin(USERS, "CreateUser", { user: { username: name, machine: { name } }, ctx: { orgId: org.id } }), `admin creates ${name}`);
      await must(
        admin(MEMBERS, "CreateMembership", { membership: { userId: detailsId(made), roles: ["ORG_OWNER_VIEWER"] }, ctx: { orgId: org.id } }),
        `${name} in its organization`,
      );
      if (org === a) userInA = detailsId(made);
      else userInB = detailsId(made);
    }
  });
  afterAll(async () => {
    await server?.close();
    await dns.close();
  });

  /** A search answer against its row's "visible" cell; what the admin sees is the reference. */
  async function checkVisible(row: Row, s: Scene, r: CallResult, visible: Visible) {
    const message = (r as { message: JsonObject }).message;
    const result = (message.result ?? []) as JsonObject[];
    const total = Number((message.details as JsonObject | undefined)?.totalResult ?? 0);
    expect(total, "totalResult counts what is shown, nothing hidden").toBe(result.length);
    if (row.service === USERS) {
      const ids = result.map((u) => detailsId(u)).sort();
      const ofA = await must(admin(USERS, "SearchUsers", { ctx: { orgId: a.id }, query: { limit: 1000 } }), "admin SearchUsers in A");
      const idsOfA = ((ofA.result ?? []) as JsonObject[]).map((u) => detailsId(u)).sort();
      expect(idsOfA).toContain(userInA);
      if (visible === "A") expect(ids).toEqual(idsOfA);
      if (visible === "all") expect(ids).toEqual(expect.arrayContaining([...idsOfA, userInB, plainId, userIds.get("system")!]));
      return;
    }
    if (row.service === MEMBERS) {
      const key = (m: JsonObject) => `${String(m.userId)}/${String((m.context as JsonObject).type)}/${String((m.context as JsonObject).id ?? "")}`;
      const keys = result.map(key).sort();
      const ofA = await must(admin(MEMBERS, "SearchMemberships", { ctx: { orgId: a.id }, query: { limit: 1000 } }), "admin SearchMemberships in A");
      const keysOfA = ((ofA.result ?? []) as JsonObject[]).map(key).sort();
      expect(keysOfA).toEqual(expect.arrayContaining([`${userInA}/OWNER_TYPE_ORG/${a.id}`, `${userIds.get("ownerInA")}/OWNER_TYPE_ORG/${a.id}`]));
      if (visible === "A") expect(keys).toEqual(keysOfA);
      if (visible === "all") {
        expect(keys).toEqual(
          expect.arrayContaining([...keysOfA, `${userInB}/OWNER_TYPE_ORG/${b.id}`, `${userIds.get("iamOwner")}/OWNER_TYPE_INSTANCE/${server.instanceId}`]),
        );
        expect(
          keys.filter((k) => k.includes("OWNER_TYPE_SYSTEM")),
          "no system membership without ctx.system",
        ).toEqual([]);
      }
      if (visible === "sys") {
        expect(
          keys.filter((k) => !k.includes("/OWNER_TYPE_SYSTEM/")),
          "only system memberships",
        ).toEqual([]);
        expect(keys).toContain(`${userIds.get("system")}/OWNER_TYPE_SYSTEM/`);
      }
      return;
    }
    if (row.service === ORGS) {
      const ids = result.map((o) => String((o.details as JsonObject).id)).sort();
      if (visible === "none") expect(ids).toEqual([]);
      if (visible === "A") expect(ids).toEqual([a.id]);
      if (visible === "all") expect(ids).toEqual(expect.arrayContaining([a.id, b.id, s.defaultOrgId]));
      return;
    }
    const domains = result.map((d) => String(d.domain)).sort();
    const ofA = await must(admin(DOMAINS, "SearchDomains", { ctx: { orgId: a.id }, query: { limit: 1000 } }), "admin SearchDomains in A");
    const domainsOfA = ((ofA.result ?? []) as JsonObject[]).map((d) => String(d.domain)).sort();
    expect(domainsOfA).toEqual(expect.arrayContaining([a.primary, "added-a.matrix.example"]));
    if (visible === "none") expect(domains).toEqual([]);
    if (visible === "A") expect(domains).toEqual(domainsOfA);
    if (visible === "all") expect(domains).toEqual(expect.arrayContaining([...domainsOfA, b.primary, "added-b.matrix.example"]));
  }

  // Every row once per database, the protocols in turn, shifted by two on PGlite so that each
  // row meets two protocols: the database does not meet the transport (the interceptors and
  // handlers are the same; each service's protocol-matrix test compares the protocols call
  // by call), and every row over every protocol made this file alone run for 15 minutes of
  // CI (docs/testing.md).
  const rowsOver = (protocol: Protocol) => ROWS.filter((_, i) => PROTOCOLS[(i + (kind === "pglite" ? 2 : 0)) % PROTOCOLS.length] === protocol);
  describe.each(PROTOCOLS)("over %s", (protocol) => {
    it.each(rowsOver(protocol).map((row) => [`${row.service.name}.${row.rpc} ${row.what}`.trim(), row] as const))("%s", async (_label, row) => {
      const problems: string[] = [];
      for (const [i, column] of COLUMNS.entries()) {
        const expected = row.expect[i]!;
        const inB = column === "ownerInB" || column === "viewerInB";
        const member = column.startsWith("owner") || column.startsWith("viewer");
        const org = row.fresh && !member ? await createOrg(unique("Matrix fresh")) : inB ? b : a;
        const s: Scene = {
          column,
          protocol,
          org,
          other: org.id === b.id ? a : b,
          a,
          b,
          defaultOrgId: server.defaultOrgId,
          targetId,
          instanceId: server.instanceId,
          self: userIds.get(column) ?? plainId,
          plainId,
          baseUrl: server.baseUrl,
          memo: {},
          admin,
          unique,
          deliveredDelivery,
          linkAccount: linkAccountOf,
          publishTxt: (name, records) => dns.txt.set(name, records),
        };
        try {
          const request = await row.request(s);
          const result = await protocolClient(row.service, protocol, server.baseUrl).call(row.rpc, request, tokens.get(column));
          const seen = outcomeOf(result);
          if (seen !== expected) {
            problems.push(`${column}: expected ${expected}, saw ${seen}${result.ok ? "" : ` (${result.message})`}`);
          } else {
            if (result.httpStatus !== undefined) {
              const status = HTTP_STATUS[expected];
              if (status ? result.httpStatus !== status : result.httpStatus >= 300) problems.push(`${column}: HTTP ${result.httpStatus} for ${expected}`);
            }
            if (expected === OK && row.visible) await checkVisible(row, s, result, row.visible[i]!);
          }
          await row.check?.(s, result, seen as Outcome);
          await row.cleanup?.(s);
        } catch (error) {
          problems.push(`${column}: ${(error as Error).message.split("\n")[0]}`);
        }
      }
      expect(problems, `${protocol} ${row.service.name}.${row.rpc} ${row.what}`).toEqual([]);
    });
  });

  it("left A and B as they were made (names aside): active, not the default, with their domains", async () => {
    for (const org of [a, b]) {
      const got = await must(admin(ORGS, "GetOrganization", { id: org.id }), "admin GetOrganization");
      expect(got.organization).toMatchObject({ state: "ORGANIZATION_STATE_ACTIVE", primaryDomain: org.primary });
      expect((got.organization as JsonObject).isDefault ?? false).toBe(false);
    }
    const def = await must(admin(ORGS, "GetInstanceDefault", {}), "admin GetInstanceDefault");
    expect(idOf({ ok: true, message: def.organization as JsonObject })).toBe(server.defaultOrgId);
  });

  it("an ORG_OWNER of A adds a domain to A with ctx.orgId=A; it belongs to A, and B cannot be reached", async () => {
    const owner = tokens.get("ownerInA")!;
    for (const protocol of PROTOCOLS) {
      const client = protocolClient(DOMAINS, protocol, server.baseUrl);
      const domain = `own-${protocol}.matrix.example`;
      const added = await client.call("AddDomain", { domain: { domain }, ctx: { orgId: a.id } }, owner);
      expect(added, protocol).toMatchObject({ ok: true, message: { details: { id: domain, resourceOwner: { id: a.id } } } });
      if (protocol === "rest") expect(added.httpStatus).toBe(201);
      const mine = await client.call("SearchDomains", { ctx: { orgId: a.id }, filters: [{ domain: { domain, method: "TEXT_FILTER_METHOD_EQUALS" } }] }, owner);
      expect(mine, protocol).toMatchObject({ ok: true, message: { result: [{ domain, details: { resourceOwner: { id: a.id } } }] } });
      expect(JSON.stringify(mine), "neither primary nor verified").not.toMatch(/isPrimary|isVerified/);
      const intoB = await client.call("AddDomain", { domain: { domain: `own-b-${protocol}.matrix.example` }, ctx: { orgId: b.id } }, owner);
      expect(intoB, protocol).toMatchObject({ ok: false, code: Code.PermissionDenied });
    }
  });
});
