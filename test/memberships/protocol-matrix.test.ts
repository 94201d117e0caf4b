import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { comparable, PROTOCOL_TOKEN } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, HTTP, MEMBERS, ok, outcome, type Msg } from "./helpers.js";

type Step = { result: CallResult; expected: string };

describe.each(DATABASE_KINDS)("every PlatformMemberships RPC over every protocol (%s)", (kind) => {
  let server: TestServer;
  let otherInstanceUser: string;
  beforeAll(async () => {
    server = await startTestServer(kind);
    const b = await server.createInstance("mm-b.example");
    otherInstanceUser = (await server.createUser({ instanceId: b.instanceId })).userId;
  });
  afterAll(() => server?.close());

  /** The same scenario once per protocol, each with its own organization and users. */
  async function scenario(protocol: Protocol) {
    const t = PROTOCOL_TOKEN[protocol];
    const client = protocolClient(MEMBERS, protocol, server.baseUrl);
    const steps: Record<string, Step> = {};
    /** One call, with the outcome it must have ("ok" or a code's name). */
    const run = async (step: string, expected: string, method: string, req: JsonObject, token: string | undefined = server.adminToken) => {
      const result = await client.call(method, req, token);
      steps[step] = { result, expected };
      return result;
    };
    const org = await createOrg(server, `mm${t} Org`);
    const u1 = (await server.createUser({})).userId;
    const u2 = (await server.createUser({})).userId;
    const plain = await server.createUser({});
    const inOrg = { orgId: org.id };

    // Refused before anything exists: unknown roles, roles of another context, users that are not there.
    await run("createUnknownRole", "InvalidArgument", "CreateMembership", { membership: { userId: u1, roles: ["NOPE"] } });
    await run("createLowerCaseRole", "InvalidArgument", "CreateMembership", { membership: { userId: u1, roles: ["iam_owner"] } });
    await run("createOrgRoleInInstance", "InvalidArgument", "CreateMembership", { membership: { userId: u1, roles: ["ORG_OWNER"] } });
    await run("createSystemRoleInInstance", "InvalidArgument", "CreateMembership", { membership: { userId: u1, roles: ["SYSTEM_OWNER"] } });
    await run("createIamRoleInOrg", "InvalidArgument", "CreateMembership", { membership: { userId: u1, roles: ["IAM_OWNER"] }, ctx: inOrg });
    await run("createMixedRoles", "InvalidArgument", "CreateMembership", { membership: { userId: u1, roles: ["IAM_OWNER", "ORG_OWNER"] } });
    await run("createMissingUser", "NotFound", "CreateMembership", { membership: { userId: "no-such-user", roles: ["IAM_OWNER"] } });
    await run("createOtherInstanceUser", "NotFound", "CreateMembership", { membership: { userId: otherInstanceUser, roles: ["IAM_OWNER"] } });
    await run("createOtherInstanceUserInOrg", "NotFound", "CreateMembership", { membership: { userId: otherInstanceUser, roles: ["ORG_OWNER"] }, ctx: inOrg });
    await run("createInMissingOrg", "NotFound", "CreateMembership", { membership: { userId: u1, roles: ["ORG_OWNER"] }, ctx: { orgId: "no-such-org" } });
    await run("searchNothingYet", "ok", "SearchMemberships", { filters: [{ user: { userId: u1 } }] });

    // Creation in every kind of context.
    await run("create", "ok", "CreateMembership", { membership: { userId: u1, roles: ["IAM_OWNER_VIEWER"] } });
    await run("createAgain", "AlreadyExists", "CreateMembership", { membership: { userId: u1, roles: ["IAM_OWNER"] } });
    await run("createAgainByInstanceId", "AlreadyExists", "CreateMembership", {
      membership: { userId: u1, roles: ["IAM_OWNER"] },
      ctx: { instanceId: server.instanceId },
    });
    await run("createInOrg", "ok", "CreateMembership", { membership: { userId: u1, roles: ["ORG_OWNER_VIEWER"] }, ctx: inOrg });
    await run("createInOrgByDomain", "ok", "CreateMembership", {
      membership: { userId: u2, roles: ["ORG_OWNER", "ORG_OWNER_VIEWER"] },
      ctx: { orgDomain: org.primary },
    });
    await run("createInOrgAgain", "AlreadyExists", "CreateMembership", { membership: { userId: u2, roles: ["ORG_OWNER"] }, ctx: inOrg });
    await run("createInSystem", "ok", "CreateMembership", { membership: { userId: u2, roles: ["SYSTEM_OWNER"] }, ctx: { system: true } });
    await run("createDenied", "PermissionDenied", "CreateMembership", { membership: { userId: u2, roles: ["IAM_OWNER_VIEWER"] } }, plain.token);
    await run("createUnauthenticated", "Unauthenticated", "CreateMembership", { membership: { userId: u2, roles: ["IAM_OWNER_VIEWER"] } }, "");
    await run("createInvalid", "InvalidArgument", "CreateMembership", { membership: { userId: u2, roles: [] } });

    // Patch: a change is one event; the same roles (in any order) change nothing.
    await run("patch", "ok", "PatchMembership", { userId: u1, membership: { roles: ["IAM_OWNER"] } });
    await run("patchSame", "ok", "PatchMembership", { userId: u1, membership: { roles: ["IAM_OWNER"] } });
    await run("patchTwo", "ok", "PatchMembership", { userId: u1, membership: { roles: ["IAM_OWNER", "IAM_OWNER_VIEWER"] } });
    await run("patchReordered", "ok", "PatchMembership", { userId: u1, membership: { roles: ["IAM_OWNER_VIEWER", "IAM_OWNER"] } });
    await run("patchWrongContext", "InvalidArgument", "PatchMembership", { userId: u1, membership: { roles: ["ORG_OWNER"] } });
    await run("patchUnknownRole", "InvalidArgument", "PatchMembership", { userId: u1, membership: { roles: ["IAM_OWNER", "NOPE"] } });
    await run("patchNoMembership", "NotFound", "PatchMembership", { userId: u2, membership: { roles: ["IAM_OWNER"] } });
    await run("patchMissingUser", "NotFound", "PatchMembership", { userId: "no-such-user", membership: { roles: ["IAM_OWNER"] } });
    await run("patchInOrg", "ok", "PatchMembership", { userId: u1, membership: { roles: ["ORG_OWNER"] }, ctx: inOrg });
    await run("patchDenied", "PermissionDenied", "PatchMembership", { userId: u1, membership: { roles: ["IAM_OWNER_VIEWER"] } }, plain.token);

    // Reads.
    await run("search", "ok", "SearchMemberships", { filters: [{ user: { userId: u1 } }], query: { asc: true } });
    await run("searchOrg", "ok", "SearchMemberships", { ctx: inOrg, sortingColumn: "MEMBERSHIP_FIELD_NAME_CREATION_DATE", query: { asc: true } });
    await run("searchSystem", "ok", "SearchMemberships", { ctx: { system: true }, filters: [{ user: { userId: u2 } }] });
    await run("searchDenied", "PermissionDenied", "SearchMemberships", {}, plain.token);
    await run("searchUnauthenticated", "Unauthenticated", "SearchMemberships", {}, "");
    await run("roles", "ok", "ListAvailableRoles", {}, plain.token);
    await run("rolesOrg", "ok", "ListAvailableRoles", { ctx: inOrg }, plain.token);
    await run("rolesSystem", "ok", "ListAvailableRoles", { ctx: { system: true } });
    await run("rolesSystemDenied", "PermissionDenied", "ListAvailableRoles", { ctx: { system: true } }, plain.token);
    await run("rolesUnauthenticated", "Unauthenticated", "ListAvailableRoles", {}, "");

    // Delete, and what follows it.
    await run("deleteDenied", "PermissionDenied", "DeleteMembership", { userId: u1 }, plain.token);
    await run("delete", "ok", "DeleteMembership", { userId: u1 });
    await run("deleteAgain", "NotFound", "DeleteMembership", { userId: u1 });
    await run("patchDeleted", "NotFound", "PatchMembership", { userId: u1, membership: { roles: ["IAM_OWNER"] } });
    await run("searchAfterDelete", "ok", "SearchMemberships", { filters: [{ user: { userId: u1 } }] });
    await run("recreate", "ok", "CreateMembership", { membership: { userId: u1, roles: ["IAM_OWNER_VIEWER"] } });
    await run("deleteInOrg", "ok", "DeleteMembership", { userId: u2, ctx: { orgDomain: org.primary } });
    await run("deleteInSystem", "ok", "DeleteMembership", { userId: u2, ctx: { system: true } });
    await run("deleteInSystemAgain", "NotFound", "DeleteMembership", { userId: u2, ctx: { system: true } });
    await run("searchEnd", "ok", "SearchMemberships", { filters: [{ context: { id: org.id } }] });
    return { steps, ids: { u1, u2, org: org.id, instance: server.instanceId } };
  }

  it("gives the same results and codes on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));

    // Every step has the outcome it must have, on every protocol; REST with the matching status.
    const problems: string[] = [];
    for (const [protocol, { steps }] of byProtocol) {
      for (const [name, { result, expected }] of Object.entries(steps)) {
        if (outcome(result) !== expected) problems.push(`${protocol} ${name}: expected ${expected}, saw ${JSON.stringify(result)}`);
        const status = (name.startsWith("create") && expected === "ok") || name === "recreate" ? 201 : HTTP[expected];
        if (protocol === "rest" && result.httpStatus !== status) problems.push(`REST ${name}: HTTP ${result.httpStatus}, expected ${status}`);
      }
    }
    expect(problems).toEqual([]);

    const { steps: g, ids } = byProtocol.get("grpc")!;
    const r = (step: string): Msg => ok(g[step]!.result);
    const instance = { type: "OWNER_TYPE_INSTANCE", id: server.instanceId };
    const inOrg = { type: "OWNER_TYPE_ORG", id: ids.org };
    const system = { type: "OWNER_TYPE_SYSTEM" };

    // Details: the user's id, the context as owner (the system with no id), the membership's own sequence.
    expect(r("create")).toEqual({ details: { id: ids.u1, sequence: "1", changeDate: expect.any(String), resourceOwner: instance } });
    expect(r("createInOrg")).toEqual({ details: { id: ids.u1, sequence: "1", changeDate: expect.any(String), resourceOwner: inOrg } });
    expect(r("createInOrgByDomain")).toEqual({ details: { id: ids.u2, sequence: "1", changeDate: expect.any(String), resourceOwner: inOrg } });
    expect(r("createInSystem")).toEqual({ details: { id: ids.u2, sequence: "1", changeDate: expect.any(String), resourceOwner: system } });
    expect(r("searchNothingYet").result ?? []).toEqual([]);

    expect(r("patch").details).toMatchObject({ id: ids.u1, sequence: "2", resourceOwner: instance });
    expect(r("patchSame").details).toEqual(r("patch").details);
    expect(r("patchTwo").details).toMatchObject({ sequence: "3" });
    expect(r("patchReordered").details, "the same roles in another order change nothing").toEqual(r("patchTwo").details);
    expect(r("patchInOrg").details).toMatchObject({ id: ids.u1, sequence: "2", resourceOwner: inOrg });

    const row = (userId: string, context: JsonObject, roles: string[], sequence: string) => ({
      details: { id: userId, sequence, changeDate: expect.any(String), resourceOwner: context },
      userId,
      context,
      roles,
    });
    expect(r("search")).toMatchObject({ details: { totalResult: "2", endOfList: true, appliedLimit: 100 } });
    expect(r("search").result).toEqual([row(ids.u1, instance, ["IAM_OWNER", "IAM_OWNER_VIEWER"], "3"), row(ids.u1, inOrg, ["ORG_OWNER"], "2")]);
    expect(r("searchOrg")).toMatchObject({ details: { totalResult: "2" }, sortingColumn: "MEMBERSHIP_FIELD_NAME_CREATION_DATE" });
    expect(r("searchOrg").result).toEqual([row(ids.u1, inOrg, ["ORG_OWNER"], "2"), row(ids.u2, inOrg, ["ORG_OWNER", "ORG_OWNER_VIEWER"], "1")]);
    expect(r("searchSystem").result).toEqual([row(ids.u2, system, ["SYSTEM_OWNER"], "1")]);

    const names = (m: Msg) => (m.roles as Msg[]).map((x) => x.name).sort();
    expect(names(r("roles"))).toEqual(["IAM_OWNER", "IAM_OWNER_VIEWER", "LOGIN_CLIENT"]);
    expect(names(r("rolesOrg"))).toEqual(["ORG_OWNER", "ORG_OWNER_VIEWER"]);
    expect(names(r("rolesSystem"))).toEqual(["SYSTEM_OWNER"]);

    // Delete: the last event of the membership; a re-created one continues its sequence.
    expect(r("delete").details).toMatchObject({ id: ids.u1, sequence: "4", resourceOwner: instance });
    expect(r("searchAfterDelete").result).toEqual([row(ids.u1, inOrg, ["ORG_OWNER"], "2")]);
    expect(r("recreate").details).toMatchObject({ id: ids.u1, sequence: "5", resourceOwner: instance });
    expect(r("deleteInOrg").details).toMatchObject({ id: ids.u2, sequence: "2", resourceOwner: inOrg });
    expect(r("deleteInSystem").details).toMatchObject({ id: ids.u2, sequence: "2", resourceOwner: system });
    expect(r("searchEnd").result).toEqual([row(ids.u1, inOrg, ["ORG_OWNER"], "2")]);
    expect(g.createAgain!.result).toMatchObject({ ok: false, code: Code.AlreadyExists });

    // The other protocols agree with gRPC, ids and times aside.
    for (const protocol of PROTOCOLS.slice(1)) {
      const other = byProtocol.get(protocol)!;
      for (const [name, step] of Object.entries(g)) {
        expect(comparable(other.steps[name]!.result, other.ids, { prefix: "mm" }), `${protocol} ${name}`).toEqual(
          comparable(step.result, ids, { prefix: "mm" }),
        );
      }
    }
  });
});
