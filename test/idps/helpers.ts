import type { JsonObject } from "@bufbuild/protobuf";
import { PlatformIdentityProviders } from "../../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { okMessage, type Msg } from "../support/results.js";

export const ACTIVE = "EFFECTIVE_STATE_ACTIVE";
export const INACTIVE = "EFFECTIVE_STATE_INACTIVE";
export const ACTIVATE = "STATE_POLICY_ACTIVATE";
export const DEACTIVATE = "STATE_POLICY_DEACTIVATE";
export const INHERIT = "STATE_POLICY_INHERIT";

export const systemOwner = { type: "OWNER_TYPE_SYSTEM" };
export const instanceOwner = (id: string) => ({ type: "OWNER_TYPE_INSTANCE", id });
export const orgOwner = (id: string) => ({ type: "OWNER_TYPE_ORG", id });

export interface Idps {
  call(method: string, req: JsonObject, token?: string): Promise<CallResult>;
  ok(method: string, req: JsonObject, token?: string): Promise<Msg>;
}

/** A PlatformIdentityProviders client with a default token. */
export function idpClient(baseUrl: string, token: string, protocol: Protocol = "grpc"): Idps {
  const client = protocolClient(PlatformIdentityProviders, protocol, baseUrl);
  return {
    call: (method, req, t = token) => client.call(method, req, t),
    ok: async (method, req, t = token) => okMessage(await client.call(method, req, t)),
  };
}

export async function createOrg(baseUrl: string, token: string, name: string): Promise<string> {
  const created = okMessage(await protocolClient(PlatformOrganizations, "grpc", baseUrl).call("CreateOrganization", { organization: { name } }, token));
  return created.details.id as string;
}

export async function deleteOrg(baseUrl: string, token: string, id: string): Promise<void> {
  okMessage(await protocolClient(PlatformOrganizations, "grpc", baseUrl).call("DeleteOrganization", { id }, token));
}

/** A GitLab provider definition. */
export function gitlab(name: string, extra: JsonObject = {}): JsonObject {
  return { idp: { name, ...extra }, config: { clientId: `${name}-client`, clientSecret: "s3cret-value", scopes: ["openid"] } };
}
