import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { verifySignature } from "../../src/engines/actions/signature.js";
import { PROTOCOLS, protocolClient, type Protocol } from "../support/clients.js";
import { freePort } from "../support/child-service.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { okMessage } from "../support/results.js";
import { readmeVerify } from "../support/readme-verify.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Receiver } from "../support/target-receiver.js";
import { humanUser, uniqueName } from "../users/helpers.js";

/*
 * Request and response executions calling real targets: a receiver on 127.0.0.1 (hence
 * PLATFORM_OUTBOUND_ALLOW_PRIVATE=true) records every call and answers as each test says.
 */

const USERS = "platform.resources.user.v3alpha.PlatformUsers";
const CREATE_USER = `/${USERS}/CreateUser`;
const GET_USER = `/${USERS}/GetUser`;

describe.each(DATABASE_KINDS)("request and response executions (%s)", (kind) => {
  let server: TestServer;
  let receiver: Receiver;
  let origin = "";
  const actions = () => protocolClient(PlatformActions, "grpc", server.baseUrl);
  const users = (p: Protocol = "grpc") => protocolClient(PlatformUsers, p, server.baseUrl);
  const executions: JsonObject[] = [];

  /** A target at the receiver's `/<name>`; returns its id and signing key. */
  async function target(name: string, kind: "restWebhook" | "restRequestResponse" = "restWebhook", extra: JsonObject = {}) {
    const unique = uniqueName(name);
    const made = okMessage(
      await actions().call("CreateTarget", { target: { name: unique, [kind]: { url: `${origin}/${name}` }, timeout: "5s", ...extra } }, server.adminToken),
    );
    return { id: made.details.id as string, key: made.signingKey as string, name: unique };
  }

  async function put(condition: JsonObject, targets: string[], includes: string[] = []) {
    okMessage(await actions().call("PutExecution", { execution: { condition, targets, includes } }, server.adminToken));
    executions.push(condition);
  }

  const createUser = (p: Protocol = "grpc", username = uniqueName("exec")) => users(p).call("CreateUser", { user: humanUser(username) }, server.adminToken);
  const userNamed = async (username: string) =>
    (okMessage(await users().call("SearchUsers", { filters: [{ username: { value: username, method: "TEXT_FILTER_METHOD_EQUALS" } }] }, server.adminToken))
      .result ?? []) as JsonObject[];

  beforeAll(async () => {
    receiver = new Receiver();
    origin = await receiver.start();
    server = await startTestServer(kind, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true" });
  }, 120_000);
  afterEach(async () => {
    // Each test leaves no execution behind for the next one.
    while (executions.length > 0) {
      const condition = executions.pop()!;
      const found = okMessage(await actions().call("SearchExecutions", { filters: [{ inConditions: { conditions: [condition] } }] }, server.adminToken));
      for (const r of (found.result ?? []) as JsonObject[]) {
        okMessage(await actions().call("DeleteExecution", { id: (r.details as JsonObject).id as string }, server.adminToken));
      }
    }
    receiver.answers.clear();
  });
  afterAll(async () => {
    await server?.close();
    receiver?.close();
  });

  it("sends the signed request to the method's target over every protocol; the call goes on", async () => {
    const t = await target("signed");
    await put({ request: { method: CREATE_USER } }, [t.id]);
    for (const p of PROTOCOLS) {
      const username = uniqueName(`signed-${p}`);
      const before = receiver.callsTo("/signed").length;
      okMessage(await createUser(p, username));
      const calls = receiver.callsTo("/signed");
      expect(calls.length, p).toBe(before + 1);
      const call = calls.at(-1)!;
      expect(call.headers["content-type"]).toBe("application/json");
      expect(verifySignature(call.headers["platform-signature"] as string, call.raw, t.key)).toBe(true);
      expect(verifySignature(call.headers["platform-signature"] as string, `${call.raw} `, t.key)).toBe(false);
      expect(call.body).toMatchObject({ fullMethod: CREATE_USER, instanceID: server.instanceId, orgID: expect.any(String), userID: expect.any(String) });
      // Proto field names, as the spec shows the payload.
      expect(call.body.request).toMatchObject({ user: { username, human: { profile: { given_name: "Given", family_name: "Family" } } } });
      const headers = JSON.stringify(call.body.headers ?? {}).toLowerCase();
      expect(headers).not.toContain("authorization");
      expect(headers).not.toContain(server.adminToken.toLowerCase());
      expect(await userNamed(username)).toHaveLength(1);
    }
  });

  it("lets an interrupting target veto the call with its status and message; nothing is created", async () => {
    const t = await target("veto", "restWebhook", { interruptOnError: true });
    await put({ request: { method: CREATE_USER } }, [t.id]);
    receiver.answers.set("/veto", () => ({ json: { forwardedStatusCode: 403, forwardedErrorMessage: "no new users on Sundays" } }));
    const username = uniqueName("vetoed");
    expect(await createUser("grpc", username)).toMatchObject({ ok: false, code: Code.PermissionDenied, message: "no new users on Sundays" });
    const rest = await createUser("rest", username);
    expect(rest).toMatchObject({ ok: false, httpStatus: 403, message: "no new users on Sundays" });
    receiver.answers.set("/veto", () => ({ json: { forwardedStatusCode: 400, forwardedErrorMessage: "bad name" } }));
    expect(await createUser("connect", username)).toMatchObject({ ok: false, code: Code.InvalidArgument, message: "bad name" });
    expect(await userNamed(username)).toHaveLength(0);
  });

  it("fails the call with FailedPrecondition when an interrupting target errs or times out; a non-interrupting one is only logged", async () => {
    const slow = await target("slow", "restWebhook", { interruptOnError: true, timeout: "1s" });
    const broken = await target("broken", "restWebhook", { interruptOnError: true });
    const lenient = await target("lenient");
    receiver.answers.set("/broken", () => ({ status: 500, json: { secret: "internal detail" } }));
    receiver.answers.set("/lenient", () => ({ status: 502 }));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    receiver.answers.set("/slow", async () => {
      await held;
      return {};
    });

    await put({ request: { method: CREATE_USER } }, [lenient.id]);
    const kept = uniqueName("lenient");
    okMessage(await createUser("grpc", kept));
    expect(await userNamed(kept)).toHaveLength(1);

    await put({ request: { method: CREATE_USER } }, [lenient.id, broken.id]);
    const refused = await createUser("rest", uniqueName("broken"));
    // Which target failed and how, in the caller's error; never its answer, URL or key.
    expect(refused).toMatchObject({ ok: false, httpStatus: 400, message: `execution failed: target "${broken.name}" (${broken.id}) answered HTTP 500` });
    expect(JSON.stringify(refused)).not.toContain("internal detail");
    expect(JSON.stringify(refused)).not.toContain("127.0.0.1");

    await put({ request: { method: CREATE_USER } }, [slow.id]);
    const timedOut = await createUser("grpc", uniqueName("slow"));
    release();
    expect(timedOut).toMatchObject({
      ok: false,
      code: Code.FailedPrecondition,
      message: expect.stringMatching(/^execution failed: target "[^"]+" \(\S+\) did not answer within its timeout of \d+ ms$/),
    });

    // A receiver that has stopped (the README's walk-through after Ctrl-C): the error says so.
    const gone = uniqueName("gone");
    const goneId = okMessage(
      await actions().call(
        "CreateTarget",
        { target: { name: gone, restWebhook: { url: `http://127.0.0.1:${await freePort()}/gone` }, interruptOnError: true } },
        server.adminToken,
      ),
    ).details.id as string;
    await put({ request: { method: CREATE_USER } }, [goneId]);
    expect(await createUser("rest")).toMatchObject({
      ok: false,
      httpStatus: 400,
      message: `execution failed: target "${gone}" (${goneId}) could not be reached (ECONNREFUSED)`,
    });
  });

  it("calls the most specific execution only: method over service over all; includes after the targets, each target once", async () => {
    const a = await target("spec-a");
    const b = await target("spec-b");
    const c = await target("spec-c");
    const d = await target("spec-d");
    await put({ request: { all: true } }, [c.id]);
    await put({ request: { service: USERS } }, [b.id]);
    await put({ request: { method: GET_USER } }, [a.id]);
    await put({ request: { method: CREATE_USER } }, [d.id, a.id], [`request/${USERS}`]);
    const count = () => ["/spec-a", "/spec-b", "/spec-c", "/spec-d"].map((p) => receiver.callsTo(p).length);

    let before = count();
    const created = okMessage(await createUser());
    expect(count().map((n, i) => n - before[i]!)).toEqual([1, 1, 0, 1]);
    // In order: the execution's targets, then the include's.
    expect(receiver.calls.slice(-3).map((r) => r.path)).toEqual(["/spec-d", "/spec-a", "/spec-b"]);

    before = count();
    okMessage(await users().call("GetUser", { id: created.details.id }, server.adminToken));
    expect(count().map((n, i) => n - before[i]!)).toEqual([1, 0, 0, 0]);

    before = count();
    okMessage(await users().call("SearchUsers", {}, server.adminToken));
    expect(count().map((n, i) => n - before[i]!)).toEqual([0, 1, 0, 0]);

    // `all` covers every service, PlatformActions too (actions-audited.test.ts).
    before = count();
    okMessage(await actions().call("SearchTargets", {}, server.adminToken));
    expect(count().map((n, i) => n - before[i]!)).toEqual([0, 0, 1, 0]);
    before = count();
    okMessage(await protocolClient(PlatformOrganizations, "grpc", server.baseUrl).call("GetOrganization", { id: server.defaultOrgId }, server.adminToken));
    expect(count().map((n, i) => n - before[i]!)).toEqual([0, 0, 1, 0]);
  });

  it("picks the most specific response execution too: method over service over all", async () => {
    const m = await target("resp-m");
    const sv = await target("resp-s");
    const al = await target("resp-a");
    await put({ response: { all: true } }, [al.id]);
    await put({ response: { service: USERS } }, [sv.id]);
    await put({ response: { method: GET_USER } }, [m.id]);
    const count = () => ["/resp-m", "/resp-s", "/resp-a"].map((p) => receiver.callsTo(p).length);
    const id = okMessage(await createUser()).details.id as string;
    let before = count();
    okMessage(await users("rest").call("GetUser", { id }, server.adminToken));
    expect(count().map((n, i) => n - before[i]!)).toEqual([1, 0, 0]);
    before = count();
    okMessage(await users("connect").call("SearchUsers", {}, server.adminToken));
    expect(count().map((n, i) => n - before[i]!)).toEqual([0, 1, 0]);
    before = count();
    okMessage(await protocolClient(PlatformOrganizations, "grpc-web", server.baseUrl).call("GetOrganization", { id: server.defaultOrgId }, server.adminToken));
    expect(count().map((n, i) => n - before[i]!)).toEqual([0, 0, 1]);
    expect(receiver.callsTo("/resp-a").at(-1)!.body).toMatchObject({ response: { organization: { details: { id: server.defaultOrgId } } } });
  });

  it("rewrites the request with a request-response target's answer, and validates the result", async () => {
    const t = await target("rewrite", "restRequestResponse", { interruptOnError: true });
    await put({ request: { method: CREATE_USER } }, [t.id]);
    const renamed = uniqueName("rewritten");
    receiver.answers.set("/rewrite", (call) => {
      const request = call.body.request as JsonObject;
      return { json: { user: { ...(request.user as JsonObject), username: renamed } } };
    });
    okMessage(await createUser("grpc-web", uniqueName("original")));
    expect(await userNamed(renamed)).toHaveLength(1);

    receiver.answers.set("/rewrite", () => ({ json: { user: { username: "" } } }));
    expect(await createUser("grpc")).toMatchObject({ ok: false, code: Code.InvalidArgument });
    receiver.answers.set("/rewrite", () => ({ json: { user: { no_such_field: 1 } } }));
    const notRequest = expect.stringMatching(
      /^execution failed: target "[^"]+" \(\S+\) answered with something that is not a platform\.resources\.user\.v3alpha\.CreateUserRequest in JSON$/,
    );
    expect(await createUser("grpc")).toMatchObject({ ok: false, code: Code.FailedPrecondition, message: notRequest });
    receiver.answers.set("/rewrite", () => ({ raw: "not json" }));
    expect(await createUser("rest")).toMatchObject({ ok: false, httpStatus: 400, message: notRequest });
    // Keys naming the prototype are unknown fields, as anywhere else: nothing is merged.
    for (const raw of [
      '{"__proto__":{"user":{"username":"proto"}}}',
      '{"user":{"__proto__":{"username":"proto"}}}',
      '{"constructor":{"prototype":{"username":"proto"}}}',
    ]) {
      receiver.answers.set("/rewrite", () => ({ raw }));
      expect(await createUser("rest"), raw).toMatchObject({ ok: false, httpStatus: 400, message: notRequest });
    }
    expect(({} as Record<string, unknown>).username).toBeUndefined();
    expect(await userNamed("proto")).toHaveLength(0);
  });

  it("sends request and response to response targets and lets a request-response target replace the response", async () => {
    const created = okMessage(await createUser());
    const id = created.details.id as string;
    const hook = await target("seen");
    const rewrite = await target("masked", "restRequestResponse");
    await put({ response: { method: GET_USER } }, [hook.id, rewrite.id]);
    receiver.answers.set("/masked", (call) => {
      const user = (call.body.response as JsonObject).user as JsonObject;
      const human = user.human as JsonObject;
      return { json: { user: { ...user, human: { ...human, profile: { ...(human.profile as JsonObject), given_name: "Masked" } } } } };
    });
    for (const p of ["grpc", "rest"] as const) {
      const got = okMessage(await users(p).call("GetUser", { id }, server.adminToken));
      expect(got.user.human.profile.givenName).toBe("Masked");
    }
    const seen = receiver.callsTo("/seen").at(-1)!;
    expect(seen.body).toMatchObject({ fullMethod: GET_USER, request: { id }, response: { user: { details: { id } } } });
  });

  it("does not wait for an async target, nor let it fail the call", async () => {
    const t = await target("async", "restWebhook", { isAsync: true });
    await put({ request: { method: CREATE_USER } }, [t.id]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    receiver.answers.set("/async", async () => {
      await held;
      return { status: 500 };
    });
    const before = receiver.callsTo("/async").length;
    // The target holds its answer until after the call has returned.
    const username = uniqueName("async");
    okMessage(await createUser("grpc", username));
    release();
    expect(await userNamed(username)).toHaveLength(1);
    await expect.poll(() => receiver.callsTo("/async").length).toBe(before + 1);
  });

  it("is verified by the README's receiver function, with either key during a rotation", async () => {
    const verify = readmeVerify();
    const t = await target("readme");
    await put({ request: { method: CREATE_USER } }, [t.id]);
    okMessage(await createUser());
    let call = receiver.callsTo("/readme").at(-1)!;
    expect(verify(call.headers["platform-signature"] as string, call.raw, t.key)).toBe(true);
    expect(verify(call.headers["platform-signature"] as string, call.raw, "wrong")).toBe(false);
    const fresh = okMessage(await actions().call("PatchTarget", { id: t.id, target: { regenerateSigningKey: true } }, server.adminToken)).signingKey as string;
    okMessage(await createUser());
    call = receiver.callsTo("/readme").at(-1)!;
    for (const key of [t.key, fresh]) expect(verify(call.headers["platform-signature"] as string, call.raw, key)).toBe(true);
  });

  it("signs with the old and the new key during the grace period after a regeneration", async () => {
    const t = await target("rotated");
    await put({ request: { method: CREATE_USER } }, [t.id]);
    const patched = okMessage(await actions().call("PatchTarget", { id: t.id, target: { regenerateSigningKey: true } }, server.adminToken));
    const fresh = patched.signingKey as string;
    expect(fresh).toBeTruthy();
    expect(fresh).not.toBe(t.key);
    okMessage(await createUser());
    const call = receiver.callsTo("/rotated").at(-1)!;
    const header = call.headers["platform-signature"] as string;
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verifySignature(header, call.raw, fresh)).toBe(true);
    expect(verifySignature(header, call.raw, t.key)).toBe(true);
    expect(verifySignature(header, call.raw, "another key")).toBe(false);
  });

  it("calls nothing while the actions feature is off, and stops calling as soon as the execution is gone", async () => {
    const t = await target("flagged");
    await put({ request: { method: CREATE_USER } }, [t.id]);
    const before = receiver.callsTo("/flagged").length;
    await setInstanceFlag(server, server.instanceId, "actions", false);
    try {
      okMessage(await createUser());
      expect(receiver.callsTo("/flagged").length).toBe(before);
    } finally {
      await setInstanceFlag(server, server.instanceId, "actions", undefined);
    }
    okMessage(await createUser());
    expect(receiver.callsTo("/flagged").length).toBe(before + 1);
    const condition = executions.pop()!;
    const found = okMessage(await actions().call("SearchExecutions", { filters: [{ inConditions: { conditions: [condition] } }] }, server.adminToken));
    okMessage(await actions().call("DeleteExecution", { id: ((found.result as JsonObject[])[0]!.details as JsonObject).id as string }, server.adminToken));
    okMessage(await createUser());
    expect(receiver.callsTo("/flagged").length).toBe(before + 1);
  });
});

describe("outbound safety for targets (pglite)", () => {
  let server: TestServer;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = new Receiver();
    server = await startTestServer("pglite");
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    receiver?.close();
  });

  it("refuses to call a loopback target by default: an interrupting target fails the call, nothing is sent", async () => {
    const origin = await receiver.start();
    const actions = protocolClient(PlatformActions, "grpc", server.baseUrl);
    const made = okMessage(
      await actions.call("CreateTarget", { target: { name: "loopback", restWebhook: { url: `${origin}/inside` }, interruptOnError: true } }, server.adminToken),
    );
    okMessage(
      await actions.call("PutExecution", { execution: { condition: { request: { method: CREATE_USER } }, targets: [made.details.id] } }, server.adminToken),
    );
    const result = await protocolClient(PlatformUsers, "grpc", server.baseUrl).call("CreateUser", { user: humanUser(uniqueName("inside")) }, server.adminToken);
    expect(result).toMatchObject({
      ok: false,
      code: Code.FailedPrecondition,
      message: `execution failed: target "loopback" (${made.details.id}) has an internal address, which PLATFORM_OUTBOUND_ALLOW_PRIVATE does not allow`,
    });
    expect(receiver.calls).toHaveLength(0);
  });
});
