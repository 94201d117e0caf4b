import { serviceClient, type Client } from "../support/service-client.js";
import type { Msg } from "../support/results.js";
import { PlatformGrants } from "../../gen/platform/resources/grant/v3alpha/grant_service_pb.js";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformProjects } from "../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import type { Protocol } from "../support/clients.js";

export const orgOwner = (id: string) => ({ type: "OWNER_TYPE_ORG", id });

const client = serviceClient;

/** Clients of the services a grant test touches, with a default token. */
export function clients(baseUrl: string, token: string, protocol: Protocol = "grpc") {
  return {
    grants: client(PlatformGrants, baseUrl, token, protocol),
    projects: client(PlatformProjects, baseUrl, token, protocol),
    users: client(PlatformUsers, baseUrl, token, protocol),
    orgs: client(PlatformOrganizations, baseUrl, token, protocol),
    memberships: client(PlatformMemberships, baseUrl, token, protocol),
  };
}
export type Clients = ReturnType<typeof clients>;

let counter = 0;
/** A name no other call of this process produced. */
export const unique = (prefix: string) => `${prefix}-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 7)}`;

export async function createOrg(c: Clients, name = unique("org")): Promise<string> {
  return (await c.orgs.ok("CreateOrganization", { organization: { name } })).details.id;
}

export async function createProject(c: Clients, orgId: string, roles: string[] = [], name = unique("project")): Promise<string> {
  const id: string = (await c.projects.ok("CreateProject", { project: { name }, ctx: { orgId } })).details.id;
  for (const key of roles) await addRole(c, id, key);
  return id;
}

export async function addRole(c: Clients, projectId: string, key: string): Promise<void> {
  await c.projects.ok("AddProjectRole", { projectId, role: { key, displayName: `Role ${key.slice(0, 20)}` } });
}

export async function createMachineUser(c: Clients, orgId: string, username = unique("user")): Promise<string> {
  return (await c.users.ok("CreateUser", { user: { username, machine: { name: username } }, ctx: { orgId } })).details.id;
}

export async function createGrant(c: Clients, projectId: string, userId: string, roleKeys: string[] = []): Promise<string> {
  return (await c.grants.ok("CreateUserGrant", { projectId, grant: { userId, roleKeys } })).details.id;
}

export async function createProjectGrant(c: Clients, projectId: string, grantedOrgId: string, roleKeys: string[] = []): Promise<string> {
  return (await c.grants.ok("CreateProjectGrant", { projectId, grant: { grantedOrgId, roleKeys } })).details.id;
}

/** GetUserGrant's grant, or the failed call. */
export async function getGrant(c: Clients, id: string, token?: string): Promise<Msg> {
  return (await c.grants.ok("GetUserGrant", { id }, token)).grant;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export { type Client };
