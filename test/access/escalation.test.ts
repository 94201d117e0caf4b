import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { ADMIN_USERNAME } from "../../src/domain/instance/bootstrap.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Nobody gains or removes more power than its own by acting on a more powerful user: minting
 * its token, setting its secret, locking, patching or deleting it, or deactivating or deleting
 * its organization, needs the right to grant every role it holds.
 */
describe.each(DATABASE_KINDS)("acting on more powerful users (%s)", (kind) => {
  let server: TestServer;
  let adminId: string;
  const users = () => protocolClient(PlatformUsers, "grpc", server.baseUrl);
  const orgs = () => protocolClient(PlatformOrganizations, "rest", server.baseUrl);
  const future = { expirationDate: new Date(Date.now() + 86_400_000).toISOString() };

  beforeAll(async () => {
    server = await startTestServer(kind);
    adminId = (await server.service.store.db.selectFrom("users").select("id").where("username", "=", ADMIN_USERNAME).executeTakeFirstOrThrow()).id;
  });
  afterAll(() => server?.close());

  const attempts = (id: string): [string, JsonObject][] => [
    ["AddPersonalAccessToken", { id, pat: future }],
    ["AddKey", { id, key: { generate: "KEY_TYPE_EC", ...future } }],
    ["GenerateSecret", { id }],
    ["PatchUser", { id, user: { machine: { description: "mine now" } } }],
    ["LockUser", { id }],
    ["DeactivateUser", { id }],
    ["DeleteUser", { id }],
  ];

  it("an ORG_OWNER of the default organization cannot touch the system's owner in it", async () => {
    const owner = await server.createUser({ roles: [{ context: "org", contextId: server.defaultOrgId, roles: ["ORG_OWNER"] }] });
    for (const [method, request] of attempts(adminId)) {
      const result = await users().call(method, request, owner.token);
      expect(result, method).toMatchObject({ ok: false, code: Code.PermissionDenied });
    }
    // Still the system's owner, untouched.
    expect(okMessage(await users().call("GetUser", { id: adminId }, server.adminToken)).user).toMatchObject({ state: "USER_STATE_ACTIVE" });
  });

  it("an IAM_OWNER who is no system member cannot either; a plain user of the organization it can", async () => {
    const iamOwner = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
    for (const [method, request] of attempts(adminId)) {
      expect(await users().call(method, request, iamOwner.token), method).toMatchObject({ ok: false, code: Code.PermissionDenied });
    }
    const plain = await server.createUser({});
    expect(await users().call("AddPersonalAccessToken", { id: plain.userId, pat: future }, iamOwner.token)).toMatchObject({ ok: true });
    // An equal it may act on: it could grant IAM_OWNER itself.
    const peer = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
    expect(await users().call("LockUser", { id: peer.userId }, iamOwner.token)).toMatchObject({ ok: true });
  });

  it("an ORG_OWNER cannot deactivate its organization while a more powerful user lives there", async () => {
    const x = okMessage(await orgs().call("CreateOrganization", { organization: { name: `escalation-${kind}` } }, server.adminToken)).details.id as string;
    // createUser puts users into the default organization: make X the default for a moment.
    okMessage(await orgs().call("SetAsInstanceDefault", { id: x }, server.adminToken));
    const strong = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
    okMessage(await orgs().call("SetAsInstanceDefault", { id: server.defaultOrgId }, server.adminToken));
    const owner = await server.createUser({ roles: [{ context: "org", contextId: x, roles: ["ORG_OWNER"] }] });
    expect(await orgs().call("DeactivateOrganization", { id: x }, owner.token)).toMatchObject({ ok: false, code: Code.PermissionDenied, httpStatus: 403 });
    // The strong user still works; the system's owner may deactivate it.
    expect(await users().call("GetUser", { id: strong.userId }, strong.token)).toMatchObject({ ok: true });
    expect(await orgs().call("DeactivateOrganization", { id: x }, server.adminToken)).toMatchObject({ ok: true });
  });
});
