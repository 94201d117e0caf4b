import type { JsonObject } from "@bufbuild/protobuf";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { okMessage, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Receiver } from "../support/target-receiver.js";
import { humanUser, uniqueName } from "../users/helpers.js";

/** The password of the users the API below creates (it must never leave the service). */
export const PASSWORD = "Deliver#Pass1";

/** What a test needs of a running service: where it is and the administrator's token. */
export interface Endpoint {
  baseUrl: string;
  adminToken: string;
}

/**
 * Targets at a receiver's `<origin>/<name>`, executions, users and the delivery log, as the
 * administrator, over gRPC; with `ctx` (such as `{ instanceId }`) in another instance.
 */
export function actionsApi(server: Endpoint, origin: string, ctx?: JsonObject) {
  const actions = () => protocolClient(PlatformActions, "grpc", server.baseUrl);
  const users = () => protocolClient(PlatformUsers, "grpc", server.baseUrl);
  const inCtx = (req: JsonObject, own = ctx): JsonObject => (own ? { ...req, ctx: own } : req);
  return {
    actions,
    async target(name: string, timeout = "5s") {
      const made = okMessage(
        await actions().call(
          "CreateTarget",
          inCtx({ target: { name: uniqueName(name), restWebhook: { url: `${origin}/${name}` }, timeout } }),
          server.adminToken,
        ),
      );
      return { id: made.details.id as string, key: made.signingKey as string };
    },
    async put(condition: JsonObject, targets: string[], includes: string[] = []) {
      okMessage(await actions().call("PutExecution", inCtx({ execution: { condition, targets, includes } }), server.adminToken));
    },
    /** In the default organization, or in the one `orgCtx` names. */
    async createUser(username = uniqueName("ev"), orgCtx?: JsonObject) {
      const made = okMessage(await users().call("CreateUser", inCtx({ user: humanUser(username, { password: PASSWORD }) }, orgCtx ?? ctx), server.adminToken));
      return made.details.id as string;
    },
    async lock(id: string) {
      okMessage(await users().call("LockUser", inCtx({ id }), server.adminToken));
    },
    async deliveries(filters: JsonObject[]): Promise<Msg[]> {
      return okMessage(await actions().call("SearchDeliveries", inCtx({ filters }), server.adminToken)).result ?? [];
    },
    retry(id: string) {
      return actions().call("RetryDelivery", inCtx({ id }), server.adminToken);
    },
  };
}

/**
 * A target receiver on 127.0.0.1 and a server allowed to call it (hence
 * PLATFORM_OUTBOUND_ALLOW_PRIVATE=true), with `env` besides; `close` stops both.
 */
export async function startWithReceiver(
  kind: Parameters<typeof startTestServer>[0],
  env: Record<string, string> = {},
): Promise<{ server: TestServer; receiver: Receiver; origin: string; close(): Promise<void> }> {
  const receiver = new Receiver();
  const origin = await receiver.start();
  const server = await startTestServer(kind, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true", ...env }).catch((error: unknown) => {
    receiver.close();
    throw error;
  });
  return {
    server,
    receiver,
    origin,
    async close() {
      await server.close();
      receiver.close();
    },
  };
}
