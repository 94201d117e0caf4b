import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { createOrg, serviceClient } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { EMPLOYEE, schemaClient } from "./helpers.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { uniqueName } from "../users/helpers.js";

/**
 * user.schema.read/write/delete, held by IAM_OWNER (a user schema is its instance's) and read
 * by IAM_OWNER_VIEWER; no organization role reaches them, and another instance's schemas are
 * NotFound.
 */
describe.each(DATABASE_KINDS)("who may do what with user schemas (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  it("answers each kind of caller as the role table says", async () => {
    const s = schemaClient(server.baseUrl, server.adminToken);
    const org = await createOrg(server.baseUrl, server.adminToken, "schema access org");
    const user = (roles: Parameters<TestServer["createUser"]>[0]["roles"]) => server.createUser({ roles }).then((u) => u.token);
    const tokens = {
      iam: await user([{ context: "instance", roles: ["IAM_OWNER"] }]),
      iamViewer: await user([{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }]),
      orgOwner: await user([{ context: "org", contextId: org, roles: ["ORG_OWNER"] }]),
      loginClient: await user([{ context: "instance", roles: ["LOGIN_CLIENT"] }]),
      plain: await user([]),
    };
    type Who = keyof typeof tokens;
    let n = 0;
    const fresh = async () => (await s.ok("CreateUserSchema", { userSchema: { type: `access-${++n}`, schema: EMPLOYEE } })).details.id as string;
    const shown = await fresh();
    const outcome = (r: CallResult) => (r.ok ? "ok" : r.code === Code.PermissionDenied ? "denied" : r.code === Code.NotFound ? "notfound" : `code ${r.code}`);
    const rows: [string, (token: string) => Promise<CallResult>, Record<Who, string>][] = [
      [
        "CreateUserSchema",
        (token) => s.call("CreateUserSchema", { userSchema: { type: `access-${++n}`, schema: EMPLOYEE } }, token),
        { iam: "ok", iamViewer: "denied", orgOwner: "denied", loginClient: "denied", plain: "denied" },
      ],
      [
        "GetUserSchema",
        (token) => s.call("GetUserSchema", { id: shown }, token),
        { iam: "ok", iamViewer: "ok", orgOwner: "denied", loginClient: "denied", plain: "denied" },
      ],
      [
        "GetUserSchema of none",
        (token) => s.call("GetUserSchema", { id: "no-such-schema" }, token),
        { iam: "notfound", iamViewer: "notfound", orgOwner: "denied", loginClient: "denied", plain: "denied" },
      ],
      [
        "PatchUserSchema",
        async (token) => s.call("PatchUserSchema", { id: await fresh(), userSchema: { type: `access-${++n}` } }, token),
        { iam: "ok", iamViewer: "denied", orgOwner: "denied", loginClient: "denied", plain: "denied" },
      ],
      [
        "DeactivateUserSchema",
        async (token) => s.call("DeactivateUserSchema", { id: await fresh() }, token),
        { iam: "ok", iamViewer: "denied", orgOwner: "denied", loginClient: "denied", plain: "denied" },
      ],
      [
        "DeleteUserSchema",
        async (token) => s.call("DeleteUserSchema", { id: await fresh() }, token),
        { iam: "ok", iamViewer: "denied", orgOwner: "denied", loginClient: "denied", plain: "denied" },
      ],
      [
        "SearchUserSchemas",
        (token) => s.call("SearchUserSchemas", {}, token),
        { iam: "ok", iamViewer: "ok", orgOwner: "denied", loginClient: "denied", plain: "denied" },
      ],
    ];
    const got: Record<string, Record<string, string>> = {};
    const want: Record<string, Record<string, string>> = {};
    for (const [name, call, expected] of rows) {
      want[name] = expected;
      got[name] = {};
      for (const who of Object.keys(tokens) as Who[]) got[name]![who] = outcome(await call(tokens[who]));
    }
    expect(got).toEqual(want);
  });

  it("keeps each instance's schemas to itself, types included", async () => {
    const s = schemaClient(server.baseUrl, server.adminToken);
    const other = await server.createInstance("127.0.0.1");
    const theirs = schemaClient(other.baseUrl, other.adminToken);
    const id = (await s.ok("CreateUserSchema", { userSchema: { type: "isolated", schema: EMPLOYEE } })).details.id as string;
    expect(await theirs.call("GetUserSchema", { id })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await theirs.call("DeleteUserSchema", { id })).toMatchObject({ ok: false, code: Code.NotFound });
    expect((await theirs.ok("SearchUserSchemas", {})).result ?? []).toEqual([]);
    // Its users are not to be made, found or searched there either.
    const users = serviceClient(PlatformUsers, server.baseUrl, server.adminToken);
    const theirUsers = serviceClient(PlatformUsers, other.baseUrl, other.adminToken);
    const user = (await users.ok("CreateUser", { user: { username: uniqueName("iso"), schema: { schemaId: id, data: { name: "Iso", team: "iso" } } } })).details
      .id as string;
    expect(await theirUsers.call("CreateUser", { user: { username: uniqueName("iso"), schema: { schemaId: id, data: { name: "x" } } } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    expect(await theirUsers.call("PatchUser", { id: user, user: { schema: { data: { team: "theirs" } } } })).toMatchObject({ ok: false, code: Code.NotFound });
    expect((await theirUsers.ok("SearchUsers", { filters: [{ schema: { schemaId: id } }] })).result ?? []).toEqual([]);
    expect(await theirUsers.call("SearchUsers", { filters: [{ data: { field: "/team", value: "iso" } }] })).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
    });
    // The same type is free in another instance.
    expect((await theirs.ok("CreateUserSchema", { userSchema: { type: "isolated", schema: EMPLOYEE } })).details.id).not.toBe(id);
    expect((await s.ok("GetUserSchema", { id })).userSchema.type).toBe("isolated");
    expect((await users.ok("GetUser", { id: user })).user.schema.data).toEqual({ name: "Iso", team: "iso" });
  });
});
