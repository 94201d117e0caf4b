import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PlatformApps } from "../../gen/platform/resources/app/v3alpha/app_service_pb.js";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformGrants } from "../../gen/platform/resources/grant/v3alpha/grant_service_pb.js";
import { PlatformIdentityProviders } from "../../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import { PlatformIDPIntents } from "../../gen/platform/resources/idp_intent/v3alpha/idp_intent_service_pb.js";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformProjects } from "../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PlatformBrandingSettings } from "../../gen/platform/settings/branding/v3alpha/branding_service_pb.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { PlatformMessageTextSettings } from "../../gen/platform/settings/message_text/v3alpha/message_text_service_pb.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { serviceClient } from "../support/service-client.js";
import { DAY_MS, fromNow, humanUser, uniqueName } from "../users/helpers.js";

/*
 * Every event names the organization of its resource (events.org_id), which is what the
 * audit log shows an organization's owners: one without it hides the change from them, one
 * with another organization's id shows it to the wrong owners. A second organization's
 * resources of every kind are made and changed through the API, then the events table is
 * read: each (aggregate, event type) must fall under the organization the lists below say.
 * A new event type, or one under another organization, fails the comparison by name.
 */

const PASSWORD = "Audit#Pass1";

/** What the scenario writes to the second organization's resources: "<aggregate type> <event type>". */
const SECOND_ORG = [
  "app app.added",
  "app app.changed",
  "app app.deactivated",
  "app app.reactivated",
  "app app.removed",
  "app_key app.key.added",
  "app_key app.key.removed",
  "idp idp.added",
  "idp idp.changed",
  "idp idp.removed",
  "idp.policy idp.policy.set",
  "idp_intent idp_intent.started",
  "membership org.member.added",
  "membership org.member.changed",
  "membership org.member.removed",
  "org org.added",
  "org org.changed",
  "org org.domain.added",
  "org org.domain.primary.set",
  "org org.domain.removed",
  "pat user.pat.added",
  "pat user.pat.removed",
  "project project.added",
  "project project.changed",
  "project project.deactivated",
  "project project.reactivated",
  "project project.removed",
  "project project.role.added",
  "project project.role.changed",
  // A session of the organization's user, made with the user (store/events.ts AggregateRef.orgId).
  "session session.added",
  "session session.metadata.set",
  "session session.password.checked",
  "session session.terminated",
  "session session.user.checked",
  "settings.branding settings.branding.set",
  "settings.login settings.login.set",
  "settings.message_text.password_reset.de settings.message_text.password_reset.de.set",
  "user user.changed",
  "user user.human.added",
  "user user.locked",
  "user user.machine.added",
  "user user.metadata.removed",
  "user user.metadata.set",
  "user user.otp_email.added",
  "user user.password.changed",
  "user user.recovery_codes.generated",
  "user user.removed",
  "user user.secret.removed",
  "user user.secret.set",
  "user user.totp.added",
  "user user.unlocked",
  "user_grant user.grant.added",
  "user_grant user.grant.changed",
  "user_grant user.grant.removed",
  "user_key user.key.added",
  "user_key user.key.removed",
];

/** The default organization's: its project, and its grant to a user of the second organization (a grant is its project's). */
const DEFAULT_ORG = ["project project.added", "project project.role.added", "user_grant user.grant.added"];

/** The instance's own resources: a target, an instance membership, the instance's settings and provider. */
const INSTANCE = ["idp idp.added", "membership instance.member.added", "settings.login settings.login.set", "target target.added"];

describe.each(DATABASE_KINDS)("the organization of every event (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  const client = (service: Parameters<typeof serviceClient>[0]) => serviceClient(service, server.baseUrl, server.adminToken);

  /** The newest position among the instance's events: the scenario's are the ones after it. */
  async function lastPosition(): Promise<number> {
    const row = await server.service.store.db
      .selectFrom("events")
      .select((eb) => eb.fn.max("instance_position").as("last"))
      .where("instance_id", "=", server.instanceId)
      .executeTakeFirstOrThrow();
    return Number(row.last ?? 0);
  }

  /** The scenario's events as "<aggregate type> <event type>", sorted and once each, by the organization they carry. */
  async function eventsByOrganization(after: number): Promise<Map<string, string[]>> {
    const rows = await server.service.store.db
      .selectFrom("events")
      .select(["aggregate_type", "event_type", "org_id"])
      .where("instance_id", "=", server.instanceId)
      .where("instance_position", ">", after)
      // Sign-in events are written behind the sign-in, so may or may not be here yet: their
      // organizations are checked by test/audit/sign-in-events.test.ts.
      .where("aggregate_type", "<>", "signin")
      .execute();
    const byOrg = new Map<string, Set<string>>();
    for (const r of rows) {
      const kinds = byOrg.get(r.org_id) ?? new Set<string>();
      kinds.add(`${r.aggregate_type} ${r.event_type}`);
      byOrg.set(r.org_id, kinds);
    }
    return new Map([...byOrg].map(([org, kinds]) => [org, [...kinds].sort()]));
  }

  /** Users, their credentials, metadata and memberships in the organization; returns a person's and a service account's ids. */
  async function usersOf(orgId: string): Promise<{ person: string; machine: string }> {
    const users = client(PlatformUsers);
    const ctx = { orgId };
    const name = uniqueName("person");
    const person = (
      await users.ok("CreateUser", { user: humanUser(name, { password: PASSWORD, email: { address: `${name}@mail.example`, isVerified: true } }), ctx })
    ).details.id as string;
    await users.ok("PatchUser", { id: person, user: { human: { nickName: "changed" } } });
    await users.ok("SetMetadata", { id: person, metadata: [{ key: "k", value: "dg==" }] });
    await users.ok("DeleteMetadata", { id: person, key: "k" });
    await users.ok("SetPassword", { id: person, password: { newPassword: `${PASSWORD}2` } });
    await users.ok("LockUser", { id: person });
    await users.ok("UnlockUser", { id: person });
    await users.ok("AddTOTP", { id: person });
    await users.ok("AddOTPEmail", { id: person });
    await users.ok("GenerateRecoveryCodes", { id: person });
    const machine = (await users.ok("CreateUser", { user: { username: uniqueName("svc"), machine: { name: "svc" } }, ctx })).details.id as string;
    const pat = await users.ok("AddPersonalAccessToken", { id: machine, pat: { expirationDate: fromNow(DAY_MS) } });
    await users.ok("DeletePersonalAccessToken", { id: machine, patId: pat.details.id });
    const key = await users.ok("AddKey", { id: machine, key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(DAY_MS) } });
    await users.ok("DeleteKey", { id: machine, keyId: key.details.id });
    await users.ok("GenerateSecret", { id: machine });
    await users.ok("RemoveSecret", { id: machine });
    const members = client(PlatformMemberships);
    await members.ok("CreateMembership", { membership: { userId: person, roles: ["ORG_OWNER_VIEWER"] }, ctx });
    await members.ok("PatchMembership", { userId: person, membership: { roles: ["ORG_OWNER"] }, ctx });
    await members.ok("DeleteMembership", { userId: person, ctx });
    return { person, machine };
  }

  /** A project with a role, an application with a key, and a grant of the role; all removed again. */
  async function projectOf(orgId: string, grantee: string): Promise<void> {
    const projects = client(PlatformProjects);
    const apps = client(PlatformApps);
    const grants = client(PlatformGrants);
    const project = (await projects.ok("CreateProject", { project: { name: uniqueName("Project") }, ctx: { orgId } })).details.id as string;
    await projects.ok("PatchProject", { id: project, project: { projectRoleCheck: true } });
    await projects.ok("AddProjectRole", { projectId: project, role: { key: "reader", displayName: "Reader" } });
    await projects.ok("PatchProjectRole", { projectId: project, key: "reader", role: { displayName: "Readers" } });
    await projects.ok("DeactivateProject", { id: project });
    await projects.ok("ReactivateProject", { id: project });
    const app = (await apps.ok("CreateApp", { projectId: project, app: { name: "api", api: { authMethodType: "API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT" } } }))
      .details.id as string;
    await apps.ok("PatchApp", { id: app, app: { name: "api 2" } });
    await apps.ok("DeactivateApp", { id: app });
    await apps.ok("ReactivateApp", { id: app });
    const key = await apps.ok("AddAppKey", { appId: app, key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(DAY_MS) } });
    await apps.ok("DeleteAppKey", { appId: app, keyId: key.details.id });
    await apps.ok("DeleteApp", { id: app });
    const grant = (await grants.ok("CreateUserGrant", { projectId: project, grant: { userId: grantee, roleKeys: ["reader"] } })).details.id as string;
    await grants.ok("PatchUserGrant", { id: grant, grant: { roleKeys: [] } });
    await grants.ok("DeleteUserGrant", { id: grant });
    await projects.ok("DeleteProject", { id: project });
  }

  /** The organization's own settings and provider, its policy for the instance's provider, an external login started with its provider. */
  async function configurationOf(orgId: string, instanceIdp: string): Promise<void> {
    const ctx = { orgId };
    await client(PlatformLoginSettings).ok("SetLoginSettings", { settings: { allowExternalIdp: { set: true } }, ctx });
    await client(PlatformBrandingSettings).ok("SetBrandingSettings", { settings: { font: { set: "BRANDING_FONT_SYSTEM_UI" } }, ctx });
    await client(PlatformMessageTextSettings).ok("SetMessageText", {
      kind: "password_reset",
      language: "de",
      settings: { subject: { set: "Neues Passwort" } },
      ctx,
    });
    const idps = client(PlatformIdentityProviders);
    // GitHub's: its endpoints are known, an external login starts without asking the provider.
    const idp = (
      await idps.ok("CreateGitHubIDP", { idp: { idp: { name: uniqueName("github") }, config: { clientId: "c", clientSecret: "s3cret-value" } }, ctx })
    ).details.id as string;
    await idps.ok("PatchGitHubIDP", { id: idp, idp: { idp: { name: uniqueName("renamed") } }, ctx });
    await idps.ok("PatchGitLabIDP", { id: instanceIdp, idp: { idp: { statePolicy: "STATE_POLICY_DEACTIVATE" } }, ctx });
    await client(PlatformIDPIntents).ok("StartIDPIntent", { idpId: idp, successUrl: "https://app.example/ok", failureUrl: "https://app.example/failed", ctx });
    await idps.ok("DeleteIDP", { id: idp, ctx });
  }

  it("is the resource's organization for every kind an organization owns, '' for the instance's own", async () => {
    const after = await lastPosition();
    // The instance's own resources.
    await client(PlatformActions).ok("CreateTarget", {
      target: { name: uniqueName("siem"), restWebhook: { url: "https://siem.example/hook" }, timeout: "5s" },
    });
    await client(PlatformLoginSettings).ok("SetLoginSettings", { settings: { allowExternalIdp: { set: true } } });
    const instanceIdp = (
      await client(PlatformIdentityProviders).ok("CreateGitLabIDP", {
        idp: { idp: { name: uniqueName("gitlab") }, config: { clientId: "c", clientSecret: "s3cret-value" } },
      })
    ).details.id as string;

    const orgs = client(PlatformOrganizations);
    const orgId = (await orgs.ok("CreateOrganization", { organization: { name: uniqueName("Audited") } })).details.id as string;
    await orgs.ok("PatchOrganization", { id: orgId, organization: { name: uniqueName("Audited") } });
    const domains = client(PlatformDomains);
    await domains.ok("AddDomain", { domain: { domain: `${uniqueName("audited")}.example` }, ctx: { orgId } });
    const extra = `${uniqueName("extra")}.example`;
    await domains.ok("AddDomain", { domain: { domain: extra }, ctx: { orgId } });
    await domains.ok("DeleteDomain", { domain: extra, ctx: { orgId } });
    const { person, machine } = await usersOf(orgId);
    await projectOf(orgId, machine);
    await configurationOf(orgId, instanceIdp);
    await client(PlatformMemberships).ok("CreateMembership", { membership: { userId: person, roles: ["IAM_OWNER_VIEWER"] } });
    const sessions = client(PlatformSessions);
    const session = await sessions.ok("CreateSession", { checks: { user: { userId: person }, password: { password: `${PASSWORD}2` } } });
    await sessions.ok("PatchSession", { id: session.sessionId, sessionToken: session.sessionToken, metadata: { step: "Mg==" } });
    await sessions.ok("DeleteSession", { id: session.sessionId });
    await client(PlatformUsers).ok("DeleteUser", { id: machine });

    // The default organization grants roles of its project to the second organization's person.
    const projects = client(PlatformProjects);
    const shared = (await projects.ok("CreateProject", { project: { name: uniqueName("Shared") } })).details.id as string;
    await projects.ok("AddProjectRole", { projectId: shared, role: { key: "viewer", displayName: "Viewer" } });
    await client(PlatformGrants).ok("CreateUserGrant", { projectId: shared, grant: { userId: person, roleKeys: ["viewer"] } });

    const found = await eventsByOrganization(after);
    expect(found.get(orgId), "the second organization's events").toEqual(SECOND_ORG);
    expect(found.get(server.defaultOrgId), "the default organization's events").toEqual(DEFAULT_ORG);
    expect(found.get(""), "the instance's events").toEqual(INSTANCE);
    expect([...found.keys()].sort()).toEqual(["", orgId, server.defaultOrgId].sort());
  });
});
