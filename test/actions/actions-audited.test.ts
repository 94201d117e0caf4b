import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PROTOCOLS, protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage } from "../support/results.js";
import type { TestServer } from "../support/server.js";
import type { Receiver } from "../support/target-receiver.js";
import { humanUser, uniqueName } from "../users/helpers.js";
import { startWithReceiver } from "./helpers.js";

/*
 * PlatformActions under request and response executions: the executions for all methods
 * cover it (an audit trail sees targets and executions change), but no target can stop or
 * rewrite its calls, so a broken target can always be repaired.
 */

const ACTIONS = "platform.resources.action.v3alpha.PlatformActions";

describe.each(DATABASE_KINDS)("PlatformActions under request and response executions (%s)", (kind) => {
  let server: TestServer;
  let receiver: Receiver;
  let origin = "";
  const actions = (p: (typeof PROTOCOLS)[number] = "grpc") => protocolClient(PlatformActions, p, server.baseUrl);
  const createUser = () =>
    protocolClient(PlatformUsers, "grpc", server.baseUrl).call("CreateUser", { user: humanUser(uniqueName("audited")) }, server.adminToken);

  async function target(name: string, kind: "restWebhook" | "restRequestResponse" = "restWebhook", extra: JsonObject = {}) {
    const made = okMessage(
      await actions().call(
        "CreateTarget",
        { target: { name: uniqueName(name), [kind]: { url: `${origin}/${name}` }, timeout: "5s", ...extra } },
        server.adminToken,
      ),
    );
    return made.details.id as string;
  }
  const put = async (condition: JsonObject, targets: string[]) =>
    okMessage(await actions().call("PutExecution", { execution: { condition, targets } }, server.adminToken));
  const callsOf = (path: string, method: string) => receiver.callsTo(path).filter((c) => c.body.fullMethod === `/${ACTIONS}/${method}`);

  let close = async () => {};

  beforeAll(async () => {
    ({ server, receiver, origin, close } = await startWithReceiver(kind));
  }, 120_000);
  afterEach(async () => {
    // Through PlatformActions itself, whatever the executions left: nothing there can stop it.
    for (const id of ["request", "response"]) await actions().call("DeleteExecution", { id }, server.adminToken);
    receiver.answers.clear();
  });
  afterAll(() => close());

  it("sends every PlatformActions call to the executions for all methods, requests and responses", async () => {
    const requests = await target("audit-requests");
    const responses = await target("audit-responses");
    await put({ request: { all: true } }, [requests]);
    await put({ response: { all: true } }, [responses]);
    // The second PutExecution was seen by the first one's target.
    expect(callsOf("/audit-requests", "PutExecution").at(-1)!.body.request).toMatchObject({
      execution: { condition: { response: { all: true } }, targets: [responses] },
    });

    for (const p of PROTOCOLS) {
      const name = uniqueName(`audited-${p}`);
      const made = okMessage(
        await actions(p).call("CreateTarget", { target: { name, restWebhook: { url: "https://example.com/audited" } } }, server.adminToken),
      );
      expect(callsOf("/audit-requests", "CreateTarget").at(-1)!.body, p).toMatchObject({ instanceID: server.instanceId, request: { target: { name } } });
      expect(callsOf("/audit-responses", "CreateTarget").at(-1)!.body, p).toMatchObject({
        request: { target: { name } },
        response: { details: { id: made.details.id } },
      });
    }
    okMessage(await actions().call("SearchTargets", {}, server.adminToken));
    expect(callsOf("/audit-responses", "SearchTargets")).toHaveLength(1);
  });

  it("lets no failing interrupting target stop a PlatformActions call, not even DeleteTarget or PutExecution on itself", async () => {
    const broken = await target("broken", "restWebhook", { interruptOnError: true });
    const brokenAfter = await target("broken-after", "restWebhook", { interruptOnError: true });
    receiver.answers.set("/broken", (call) =>
      call.body.fullMethod === `/${ACTIONS}/PutExecution` ? { json: { forwardedStatusCode: 403, forwardedErrorMessage: "no changes" } } : { status: 500 },
    );
    receiver.answers.set("/broken-after", () => ({ status: 500 }));
    await put({ request: { all: true } }, [broken]);
    await put({ response: { all: true } }, [brokenAfter]);
    // Elsewhere they interrupt, as configured.
    expect(await createUser()).toMatchObject({
      ok: false,
      code: Code.FailedPrecondition,
      message: expect.stringMatching(new RegExp(`^execution failed: target "broken\\S+" \\(${broken}\\) answered HTTP 500$`)),
    });

    // The repair: both calls reach the targets (logged failures) and go through.
    const repaired = await put({ request: { all: true } }, [broken, brokenAfter]);
    expect(repaired.created ?? false).toBe(false);
    expect(callsOf("/broken", "PutExecution").length).toBeGreaterThan(0);
    okMessage(await actions("rest").call("DeleteTarget", { id: broken }, server.adminToken));
    expect(callsOf("/broken", "DeleteTarget")).toHaveLength(1);
    expect(callsOf("/broken-after", "DeleteTarget")).toHaveLength(2);
    okMessage(await actions().call("DeleteTarget", { id: brokenAfter }, server.adminToken));
    expect(await actions().call("GetTarget", { id: broken }, server.adminToken)).toMatchObject({ ok: false, code: Code.NotFound });
    okMessage(await createUser());
  });

  it("calls a request-response target on PlatformActions, but its answer rewrites neither request nor response", async () => {
    const rewriter = await target("rewriter", "restRequestResponse", { interruptOnError: true });
    receiver.answers.set("/rewriter", (call) => {
      const request = call.body.request as JsonObject;
      if (call.body.response) return { json: { details: { id: "forged" } } };
      if (call.body.fullMethod === `/${ACTIONS}/CreateTarget`) return { json: { target: { ...(request.target as JsonObject), name: "rewritten" } } };
      return { json: { user: { ...(request.user as JsonObject), username: uniqueName("rewritten-user") } } };
    });
    await put({ request: { all: true } }, [rewriter]);
    await put({ response: { all: true } }, [rewriter]);

    const name = uniqueName("kept");
    const made = okMessage(await actions().call("CreateTarget", { target: { name, restWebhook: { url: "https://example.com/kept" } } }, server.adminToken));
    expect(callsOf("/rewriter", "CreateTarget")).toHaveLength(2);
    expect(made.details.id).not.toBe("forged");
    expect(made.signingKey).toBeTruthy();
    const got = okMessage(await actions().call("GetTarget", { id: made.details.id }, server.adminToken));
    expect(got.target.target.name).toBe(name);
    // Elsewhere the same answers rewrite, as configured.
    const user = okMessage(await createUser());
    expect(user.details.id).toBe("forged");
  });
});
