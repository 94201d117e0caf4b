import type { JsonObject } from "@bufbuild/protobuf";
import { expect } from "vitest";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { protocolClient, type CallResult, type Protocol, type ProtocolClient } from "../support/clients.js";
import type { TestServer } from "../support/server.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Msg = any;

export const DAY_MS = 24 * 3600 * 1000;
/** An RFC 3339 timestamp `ms` from now. */
export const fromNow = (ms: number) => new Date(Date.now() + ms).toISOString();

/** The message of a successful call; fails the test with the whole answer otherwise. */
export function ok(r: CallResult): Msg {
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
  return (r as { message: Msg }).message;
}

/** The failure of a call, checked for its code. */
export function failed(r: CallResult, code: number): { message: string } {
  expect(r, JSON.stringify(r)).toMatchObject({ ok: false, code });
  return r as { message: string };
}

let counter = 0;
/** A username that no other test of the file uses (lower case, no whitespace). */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}${counter}x${Math.random().toString(36).slice(2, 7)}`;
}

export function humanUser(username: string, extra: JsonObject = {}, profile: JsonObject = {}): JsonObject {
  return {
    username,
    human: {
      profile: { givenName: "Given", familyName: "Family", ...profile },
      email: { address: `${username.toLowerCase()}@mail.example` },
      ...extra,
    },
  };
}

export function machineUser(username: string, extra: JsonObject = {}): JsonObject {
  return { username, machine: { name: `svc ${username}`, ...extra } };
}

export class Users {
  readonly client: ProtocolClient;
  constructor(
    readonly server: TestServer,
    protocol: Protocol = "grpc",
    /** The caller's token; the instance administrator's by default. */
    readonly token: string = server.adminToken,
  ) {
    this.client = protocolClient(PlatformUsers, protocol, server.baseUrl);
  }

  as(token: string): Users {
    return new Users(this.server, this.client.protocol, token);
  }

  /** Requests are JSON; loosely typed so that tables of them need no casts. */
  call(method: string, req: object): Promise<CallResult> {
    return this.client.call(method, req as JsonObject, this.token);
  }

  /** Creates a user and returns its id. */
  async create(user: object, ctx?: object): Promise<string> {
    const m = ok(await this.call("CreateUser", { user, ...(ctx && { ctx }) }));
    return m.details.id as string;
  }

  async get(id: string): Promise<Msg> {
    return ok(await this.call("GetUser", { id })).user;
  }

  /** A fresh personal access token of the user, valid for a day. */
  async pat(id: string): Promise<{ token: string; id: string }> {
    const m = ok(await this.call("AddPersonalAccessToken", { id, pat: { expirationDate: fromNow(DAY_MS) } }));
    return { token: m.token, id: m.details.id };
  }
}

/** Creates an organization through the API and returns its id and primary domain. */
export async function createOrg(server: TestServer, name: string, admins: string[] = []): Promise<{ id: string; primary: string }> {
  const orgs = protocolClient(PlatformOrganizations, "grpc", server.baseUrl);
  const created = ok(await orgs.call("CreateOrganization", { organization: { name, ...(admins.length > 0 && { admins }) } }, server.adminToken));
  const id = created.details.id as string;
  const org = ok(await orgs.call("GetOrganization", { id }, server.adminToken));
  return { id, primary: org.organization.primaryDomain as string };
}

/** Fails when any of the texts appears anywhere in what was answered. */
export function expectNothingSecret(answer: unknown, secrets: string[]) {
  const dump = JSON.stringify(answer);
  for (const secret of secrets) expect(dump, `answer contains ${secret.slice(0, 12)}…`).not.toContain(secret);
  expect(dump).not.toMatch(/\$argon2|\$2[aby]\$|\$scrypt\$/);
}
