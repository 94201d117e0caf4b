import { createOrg, serviceClient, type Client } from "../support/service-client.js";
import type { JsonObject } from "@bufbuild/protobuf";
import { PlatformGrants } from "../../gen/platform/resources/grant/v3alpha/grant_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformProjects } from "../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import type { Protocol } from "../support/clients.js";

export const ACTIVE = "PROJECT_STATE_ACTIVE";
export const INACTIVE = "PROJECT_STATE_INACTIVE";
export const orgOwner = (id: string) => ({ type: "OWNER_TYPE_ORG", id });

const client = serviceClient;

export const projectClient = (baseUrl: string, token: string, protocol: Protocol = "grpc") => client(PlatformProjects, baseUrl, token, protocol);
export const grantClient = (baseUrl: string, token: string, protocol: Protocol = "grpc") => client(PlatformGrants, baseUrl, token, protocol);
export const orgClient = (baseUrl: string, token: string, protocol: Protocol = "grpc") => client(PlatformOrganizations, baseUrl, token, protocol);
export const userClient = (baseUrl: string, token: string, protocol: Protocol = "grpc") => client(PlatformUsers, baseUrl, token, protocol);

/** A machine user in the given organization (absent: the default one). */
export async function createMachineUser(baseUrl: string, token: string, username: string, orgId?: string): Promise<string> {
  const made = await userClient(baseUrl, token).ok("CreateUser", { user: { username, machine: { name: username } }, ...(orgId && { ctx: { orgId } }) });
  return made.details.id as string;
}

/** Creates a project and returns its id. */
export async function createProject(projects: Client, name: string, ctx?: JsonObject, extra: JsonObject = {}): Promise<string> {
  const made = await projects.ok("CreateProject", { project: { name, ...extra }, ...(ctx && { ctx }) });
  return made.details.id as string;
}

/** Creates a user grant and returns its id. */
export async function createGrant(grants: Client, projectId: string, userId: string, roleKeys: string[]): Promise<string> {
  return (await grants.ok("CreateUserGrant", { projectId, grant: { userId, roleKeys } })).details.id as string;
}

export const role = (key: string, displayName = key, group?: string): JsonObject => ({ key, displayName, ...(group !== undefined && { group }) });

export { createOrg, type Client };
