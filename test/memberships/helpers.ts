import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { expect } from "vitest";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import type { TestServer } from "../support/server.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Msg = any;

export const MEMBERS = PlatformMemberships;
export const ORGS = PlatformOrganizations;
export const USERS = PlatformUsers;

/** The message of a successful call; fails the test with the whole answer otherwise. */
export function ok(r: CallResult): Msg {
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
  return (r as { message: Msg }).message;
}

/** Throws (rather than asserts) so that fixtures name the step that broke. */
export async function must(r: Promise<CallResult>, what: string): Promise<Msg> {
  const result = await r;
  if (!result.ok) throw new Error(`${what}: ${Code[result.code]} ${result.message}`);
  return result.message;
}

/** A short name for an outcome, for tables: "ok", or the code's name. */
export function outcome(r: CallResult): string {
  return r.ok ? "ok" : Code[r.code]!;
}

export const HTTP: Record<string, number> = {
  ok: 200,
  InvalidArgument: 400,
  FailedPrecondition: 400,
  Unauthenticated: 401,
  PermissionDenied: 403,
  NotFound: 404,
  AlreadyExists: 409,
};

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls as someone: `call(service, rpc, req)` over one protocol with one token. */
export function caller(server: TestServer, token: string | undefined, protocol: Protocol = "grpc") {
  return (service: typeof MEMBERS | typeof ORGS | typeof USERS, rpc: string, req: JsonObject) =>
    protocolClient(service, protocol, server.baseUrl).call(rpc, req, token);
}

/** What a membership search returned, as "<user>/<context id or 'system'>" per row, in order. */
export function keysOf(m: Msg, names: Map<string, string> = new Map()): string[] {
  return ((m.result ?? []) as Msg[]).map((r) => {
    const ctx = r.context?.type === "OWNER_TYPE_SYSTEM" ? "system" : String(r.context?.id);
    return `${names.get(r.userId) ?? r.userId}/${names.get(ctx) ?? ctx}`;
  });
}

export const totalOf = (m: Msg) => Number(m.details?.totalResult ?? 0);

/** An organization made by the admin, with its primary domain. */
export async function createOrg(server: TestServer, name: string): Promise<{ id: string; primary: string }> {
  const made = await must(caller(server, server.adminToken)(ORGS, "CreateOrganization", { organization: { name } }), `admin creates ${name}`);
  return { id: String(made.details.id), primary: String(made.primaryDomain) };
}

/**
 * Takes the bootstrap's person (`admin`, who signs in to the console) out of every
 * membership, for fixtures that count every membership of the instance and the system: the
 * machine administrator stays the only bootstrapped member.
 */
export async function withoutBootstrapPerson(server: TestServer): Promise<void> {
  const found = await must(
    caller(server, server.adminToken)(USERS, "SearchUsers", { filters: [{ username: { value: "admin" } }, { organization: { orgId: server.defaultOrgId } }] }),
    "the bootstrap's person",
  );
  const userId = String(found.result[0].details.id);
  await must(caller(server, server.adminToken)(MEMBERS, "DeleteMembership", { userId }), "its instance membership");
  await must(caller(server, server.adminToken)(MEMBERS, "DeleteMembership", { userId, ctx: { system: true } }), "its system membership");
}

/** The bootstrap administrator's user id, as the administrator sees it. */
export async function adminUserId(server: TestServer): Promise<string> {
  const found = await must(
    caller(server, server.adminToken)(USERS, "SearchUsers", { filters: [{ username: { value: "platform-admin" } }] }),
    "admin finds itself",
  );
  expect(found.result).toHaveLength(1);
  return String(found.result[0].details.id);
}

/** A membership as the admin sees it: its roles, or undefined when there is none. */
export async function rolesOf(server: TestServer, userId: string, ctx?: JsonObject): Promise<string[] | undefined> {
  const context = ctx?.orgId ? String(ctx.orgId) : ctx?.system ? undefined : server.instanceId;
  const filters: JsonObject[] = [{ user: { userId } }, ...(context ? [{ context: { id: context } }] : [])];
  const found = await must(
    caller(server, server.adminToken)(MEMBERS, "SearchMemberships", { filters, ...(ctx?.system ? { ctx: { system: true } } : {}) }),
    "admin searches memberships",
  );
  const rows = (found.result ?? []) as Msg[];
  const wanted = ctx?.system ? rows : rows.filter((r) => r.context.type === (ctx?.orgId ? "OWNER_TYPE_ORG" : "OWNER_TYPE_INSTANCE"));
  expect(wanted.length, "at most one membership per context and user").toBeLessThanOrEqual(1);
  return wanted[0]?.roles;
}
