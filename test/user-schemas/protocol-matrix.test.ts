import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, type CallResult, type Protocol } from "../support/clients.js";
import { comparable, PROTOCOL_TOKEN } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { EMPLOYEE, schemaClient } from "./helpers.js";

type Step = { result: CallResult; status: number };

describe.each(DATABASE_KINDS)("every PlatformUserSchemas RPC over every protocol (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  /** The same scenario once per protocol, each with types of its own. */
  async function scenario(protocol: Protocol) {
    const t = PROTOCOL_TOKEN[protocol];
    const s = schemaClient(server.baseUrl, server.adminToken, protocol);
    const steps: Record<string, Step> = {};
    const run = async (step: string, status: number, method: string, req: JsonObject, token: string = server.adminToken) => {
      const result = await s.call(method, req, token);
      steps[step] = { result, status };
      return result;
    };
    const employee = `us${t}-employee`;
    const auth = ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_PASSWORD"];
    const created = okMessage(await run("create", 201, "CreateUserSchema", { userSchema: { type: employee, schema: EMPLOYEE, possibleAuthenticators: auth } }));
    const id: string = created.details.id;
    await run("createSameTypeOtherCase", 409, "CreateUserSchema", { userSchema: { type: employee.toUpperCase(), schema: EMPLOYEE } });
    await run("createInvalidSchema", 400, "CreateUserSchema", { userSchema: { type: `us${t}-bad`, schema: { type: "objec" } } });
    await run("createUnknownKeyword", 400, "CreateUserSchema", { userSchema: { type: `us${t}-bad`, schema: { type: "object", colour: "red" } } });
    await run("createRemoteRef", 400, "CreateUserSchema", { userSchema: { type: `us${t}-bad`, schema: { $ref: "https://schemas.example/person.json" } } });
    await run("createBadAnnotation", 400, "CreateUserSchema", {
      userSchema: { type: `us${t}-bad`, schema: { type: "object", properties: { a: { type: "string", "urn:platform:permission": { owner: "x" } } } } },
    });
    await run("createTooLarge", 400, "CreateUserSchema", {
      userSchema: { type: `us${t}-bad`, schema: { type: "object", description: "x".repeat(64 * 1024) } },
    });
    await run("createNoSchema", 400, "CreateUserSchema", { userSchema: { type: `us${t}-bad` } });
    await run("createUnspecifiedAuthenticator", 400, "CreateUserSchema", {
      userSchema: { type: `us${t}-bad`, schema: EMPLOYEE, possibleAuthenticators: ["AUTHENTICATOR_TYPE_UNSPECIFIED"] },
    });
    await run("get", 200, "GetUserSchema", { id });
    await run("getMissing", 404, "GetUserSchema", { id: "no-such-schema" });
    await run("patchType", 200, "PatchUserSchema", { id, userSchema: { type: `${employee}-2` } });
    await run("patchSameSchema", 200, "PatchUserSchema", { id, userSchema: { schema: EMPLOYEE } });
    await run("patchSchema", 200, "PatchUserSchema", { id, userSchema: { schema: { ...EMPLOYEE, required: ["name", "team"] } } });
    await run("patchAuthenticators", 200, "PatchUserSchema", { id, userSchema: { possibleAuthenticators: ["AUTHENTICATOR_TYPE_USERNAME"] } });
    await run("patchInvalidSchema", 400, "PatchUserSchema", { id, userSchema: { schema: { type: 1 } } });
    await run("afterPatch", 200, "GetUserSchema", { id });
    await run("deactivate", 200, "DeactivateUserSchema", { id });
    await run("deactivateAgain", 400, "DeactivateUserSchema", { id });
    await run("searchInactive", 200, "SearchUserSchemas", {
      filters: [{ state: { state: "USER_SCHEMA_STATE_INACTIVE" } }, { type: { value: `us${t}-`, method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
    });
    await run("activate", 200, "ActivateUserSchema", { id });
    await run("searchActive", 200, "SearchUserSchemas", {
      filters: [{ state: { state: "USER_SCHEMA_STATE_ACTIVE" } }, { type: { value: `us${t}-`, method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
      sortingColumn: "USER_SCHEMA_FIELD_NAME_TYPE",
    });
    await run("searchLimit", 400, "SearchUserSchemas", { query: { limit: 1001 } });
    await run("delete", 200, "DeleteUserSchema", { id });
    await run("getDeleted", 404, "GetUserSchema", { id });
    await run("deleteAgain", 404, "DeleteUserSchema", { id });
    await run("unauthenticated", 401, "SearchUserSchemas", {}, "");
    return { steps, ids: { schema: id } };
  }

  it("gives the same results and codes on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));
    const { steps: s, ids } = byProtocol.get("grpc")!;
    const r = (step: string) => s[step]!.result;
    const msg = (step: string): Msg => okMessage(r(step));
    const code = (step: string, expected: Code) => expect(r(step), step).toMatchObject({ ok: false, code: expected });
    const owner = { type: "OWNER_TYPE_INSTANCE", id: server.instanceId };

    expect(msg("create")).toEqual({ details: { id: ids.schema, sequence: "1", changeDate: expect.any(String), resourceOwner: owner } });
    code("createSameTypeOtherCase", Code.AlreadyExists);
    code("createInvalidSchema", Code.InvalidArgument);
    expect((r("createInvalidSchema") as { message: string }).message).toContain("not a valid JSON Schema");
    code("createUnknownKeyword", Code.InvalidArgument);
    expect((r("createUnknownKeyword") as { message: string }).message).toContain('unknown keyword: "colour"');
    code("createRemoteRef", Code.InvalidArgument);
    expect((r("createRemoteRef") as { message: string }).message).toContain('"https://schemas.example/person.json"');
    code("createBadAnnotation", Code.InvalidArgument);
    code("createTooLarge", Code.InvalidArgument);
    expect((r("createTooLarge") as { message: string }).message).toContain("65536");
    code("createNoSchema", Code.InvalidArgument);
    code("createUnspecifiedAuthenticator", Code.InvalidArgument);

    expect(msg("get")).toEqual({
      userSchema: {
        details: msg("create").details,
        type: "usga-employee",
        state: "USER_SCHEMA_STATE_ACTIVE",
        revision: 1,
        schema: EMPLOYEE,
        possibleAuthenticators: ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_PASSWORD"],
      },
    });
    code("getMissing", Code.NotFound);
    expect(msg("patchType").details.sequence).toBe("2");
    expect(msg("patchSameSchema")).toEqual(msg("patchType"));
    expect(msg("patchSchema").details.sequence).toBe("3");
    expect(msg("patchAuthenticators").details.sequence).toBe("4");
    code("patchInvalidSchema", Code.InvalidArgument);
    expect(msg("afterPatch").userSchema).toMatchObject({
      type: "usga-employee-2",
      revision: 2,
      schema: { required: ["name", "team"] },
      possibleAuthenticators: ["AUTHENTICATOR_TYPE_USERNAME"],
    });
    expect(msg("deactivate").details.sequence).toBe("5");
    code("deactivateAgain", Code.FailedPrecondition);
    expect(msg("searchInactive").result.map((x: Msg) => x.details.id)).toEqual([ids.schema]);
    expect(msg("searchInactive").result[0].state).toBe("USER_SCHEMA_STATE_INACTIVE");
    expect(msg("searchActive").result.map((x: Msg) => x.details.id)).toEqual([ids.schema]);
    expect(msg("searchActive")).toMatchObject({ sortingColumn: "USER_SCHEMA_FIELD_NAME_TYPE", details: { totalResult: "1" } });
    code("searchLimit", Code.InvalidArgument);
    expect(msg("delete").details).toMatchObject({ id: ids.schema, sequence: "7" });
    code("getDeleted", Code.NotFound);
    code("deleteAgain", Code.NotFound);
    code("unauthenticated", Code.Unauthenticated);

    const reference = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, comparable(v.result, ids, { prefix: "us" })]));
    for (const [protocol, { steps, ids: theirs }] of byProtocol) {
      expect(Object.keys(steps), protocol).toEqual(Object.keys(s));
      for (const [step, { result, status }] of Object.entries(steps)) {
        expect(comparable(result, theirs, { prefix: "us" }), `${protocol} ${step}`).toEqual(reference[step]);
        if (protocol === "rest") expect(result.httpStatus, `rest ${step}: ${JSON.stringify(result)}`).toBe(status);
      }
    }
  });
});
