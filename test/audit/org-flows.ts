import type { JsonObject } from "@bufbuild/protobuf";
import { PlatformApps } from "../../gen/platform/resources/app/v3alpha/app_service_pb.js";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformGrants } from "../../gen/platform/resources/grant/v3alpha/grant_service_pb.js";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformProjects } from "../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import type { TestDnsServer } from "../support/dns-server.js";
import { DAY_MS, fromNow, humanUser, uniqueName } from "../users/helpers.js";
import { calls, type Flow } from "./flow.js";
import { newPassword } from "./user-flows.js";

/**
 * An organization renamed, deactivated and reactivated, made the default and back, given a
 * domain proven by a TXT record, then deleted with a user of its own.
 */
export async function orgFlows(f: Flow, dns: TestDnsServer): Promise<void> {
  const orgs = calls(f, PlatformOrganizations);
  const domains = calls(f, PlatformDomains);
  const orgId = (await orgs("CreateOrganization", { organization: { name: uniqueName("Audit Org") } })).details.id as string;
  await orgs("PatchOrganization", { id: orgId, organization: { name: uniqueName("Audit Org renamed") } });
  await orgs("DeactivateOrganization", { id: orgId });
  await orgs("ReactivateOrganization", { id: orgId });
  await orgs("SetAsInstanceDefault", { id: orgId });
  await orgs("SetAsInstanceDefault", { id: f.server.defaultOrgId });

  const proven = `${uniqueName("proven")}.audit.example`;
  await domains("AddDomain", { domain: { domain: proven }, ctx: { orgId } });
  const { token } = await domains("GenerateDomainValidation", { domain: proven, type: "DOMAIN_VALIDATION_TYPE_DNS", ctx: { orgId } });
  dns.txt.set(`_platform-challenge.${proven}`, [token]);
  await domains("ValidateDomain", { domain: proven });
  await domains("SetAsPrimary", { domain: proven });
  const spare = `${uniqueName("spare")}.audit.example`;
  await domains("AddDomain", { domain: { domain: spare }, ctx: { orgId } });
  await domains("DeleteDomain", { domain: spare });

  await f.ok(PlatformUsers, "CreateUser", { user: humanUser(uniqueName("leaves"), { password: newPassword(f, "org") }), ctx: { orgId } });
  await orgs("DeleteOrganization", { id: orgId });
}

/**
 * A project with roles and a user's grant of them (one role removed under it), and its
 * applications: OpenID Connect and API, with secrets regenerated, a key, and changes of
 * authentication method; everything deleted again.
 */
export async function projectFlows(f: Flow): Promise<void> {
  const projects = calls(f, PlatformProjects);
  const grants = calls(f, PlatformGrants);
  const apps = calls(f, PlatformApps);
  const projectId = (await projects("CreateProject", { project: { name: uniqueName("Audit Project") } })).details.id as string;
  await projects("PatchProject", { id: projectId, project: { name: uniqueName("Audit Project renamed") } });
  await projects("DeactivateProject", { id: projectId });
  await projects("ReactivateProject", { id: projectId });
  for (const key of ["reader", "writer"]) await projects("AddProjectRole", { projectId, role: { key, displayName: key } });
  await projects("PatchProjectRole", { projectId, key: "reader", role: { displayName: "Reader" } });

  const userId = (await f.ok(PlatformUsers, "CreateUser", { user: humanUser(uniqueName("granted")) })).details.id as string;
  const grantId = (await grants("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["reader"] } })).details.id as string;
  await grants("PatchUserGrant", { id: grantId, grant: { roleKeys: ["reader", "writer"] } });

  // The project granted to another organization, with a PROJECT_GRANT_OWNER there.
  const grantee = (await f.ok(PlatformOrganizations, "CreateOrganization", { organization: { name: uniqueName("Audit Grantee") } })).details.id as string;
  const projectGrant = (await grants("CreateProjectGrant", { projectId, grant: { grantedOrgId: grantee, roleKeys: ["reader"] } })).details.id as string;
  await grants("PatchProjectGrant", { id: projectGrant, grant: { roleKeys: ["reader", "writer"] } });
  await grants("DeactivateProjectGrant", { id: projectGrant });
  await grants("ReactivateProjectGrant", { id: projectGrant });
  const manager = (
    await f.ok(PlatformUsers, "CreateUser", { user: { username: uniqueName("grant-manager"), machine: { name: "Grant manager" } }, ctx: { orgId: grantee } })
  ).details.id as string;
  const members = calls(f, PlatformMemberships);
  await members("CreateMembership", { membership: { userId: manager, roles: ["PROJECT_GRANT_OWNER"] }, ctx: { projectGrantId: projectGrant } });
  await members("DeleteMembership", { userId: manager, ctx: { projectGrantId: projectGrant } });

  await projects("RemoveProjectRole", { projectId, key: "writer" });
  await grants("DeleteUserGrant", { id: grantId });
  await grants("DeleteProjectGrant", { id: projectGrant });

  const web = (
    await apps("CreateApp", {
      projectId,
      app: { name: "Audit web", oidc: { redirectUris: ["https://app.example/cb"], responseTypes: ["OIDC_RESPONSE_TYPE_CODE"] } },
    })
  ).details.id as string;
  await apps("RegenerateAppSecret", { id: web });
  await apps("PatchApp", { id: web, app: { name: "Audit web 2", oidc: { authMethodType: "OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT" } } });
  const key = await apps("AddAppKey", { appId: web, key: { generate: "KEY_TYPE_RSA", expirationDate: fromNow(DAY_MS) } });
  await apps("DeleteAppKey", { appId: web, keyId: key.details.id });
  await apps("DeactivateApp", { id: web });
  await apps("ReactivateApp", { id: web });
  await apps("DeleteApp", { id: web });
  const api = (await apps("CreateApp", { projectId, app: { name: "Audit API", api: {} } })).details.id as string;
  await apps("PatchApp", { id: api, app: { api: { authMethodType: "API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT" } } });
  await apps("PatchApp", { id: api, app: { api: { authMethodType: "API_AUTH_METHOD_TYPE_BASIC" } } });
  await projects("DeleteProject", { id: projectId });
}

/** A user's memberships in the system, the instance and the default organization: given, changed where another role fits, taken. */
export async function membershipFlows(f: Flow): Promise<void> {
  const members = calls(f, PlatformMemberships);
  const userId = (await f.ok(PlatformUsers, "CreateUser", { user: { username: uniqueName("member"), machine: { name: "Member" } } })).details.id as string;
  const contexts: [JsonObject, string[], string[] | undefined][] = [
    [{ system: true }, ["SYSTEM_OWNER"], undefined],
    [{ instanceId: f.server.instanceId }, ["IAM_OWNER_VIEWER"], ["IAM_OWNER"]],
    [{ orgId: f.server.defaultOrgId }, ["ORG_OWNER_VIEWER"], ["ORG_OWNER"]],
  ];
  for (const [ctx, roles, changed] of contexts) {
    await members("CreateMembership", { membership: { userId, roles }, ctx });
    if (changed) await members("PatchMembership", { userId, membership: { roles: changed }, ctx });
    await members("DeleteMembership", { userId, ctx });
  }
}
