import type { DescService, JsonObject } from "@bufbuild/protobuf";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { protocolClient, type CallResult, type Protocol } from "./clients.js";
import { okMessage, type Msg } from "./results.js";

/** A client of one service with a default token, as most tests call. */
export interface Client {
  call(method: string, req: JsonObject, token?: string): Promise<CallResult>;
  /** The message of a successful call; fails the test otherwise. */
  ok(method: string, req: JsonObject, token?: string): Promise<Msg>;
}

export function serviceClient(service: DescService, baseUrl: string, token: string, protocol: Protocol = "grpc"): Client {
  const c = protocolClient(service, protocol, baseUrl);
  return {
    call: (method, req, t = token) => c.call(method, req, t),
    ok: async (method, req, t = token) => okMessage(await c.call(method, req, t)),
  };
}

/** Creates an organization through the API; returns its id. */
export async function createOrg(baseUrl: string, token: string, name: string): Promise<string> {
  return (await serviceClient(PlatformOrganizations, baseUrl, token).ok("CreateOrganization", { organization: { name } })).details.id as string;
}
