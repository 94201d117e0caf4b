import { useQuery } from "@connectrpc/connect-query";
import { useParams } from "@tanstack/react-router";
import type { ReactNode } from "react";
import { PlatformActions } from "../../../gen/platform/resources/action/v3alpha/action_service_pb";
import { PlatformApps } from "../../../gen/platform/resources/app/v3alpha/app_service_pb";
import { PlatformIdentityProviders } from "../../../gen/platform/resources/idp/v3alpha/idp_service_pb";
import { PlatformOrganizations } from "../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { PlatformProjects } from "../../../gen/platform/resources/project/v3alpha/project_service_pb";
import { PlatformUsers } from "../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { SIGN_IN_COLUMNS, type EventColumn } from "./events/columns";
import { EventLog } from "./events/EventLog";
import { ResourceTabs, TABS } from "./events/ResourceTabs";
import { useScope } from "../scope";
import { ActionsTabs } from "./actions/ActionsTabs";
import { displayName } from "./Users";

/**
 * The History tab of each resource's page (and a user's Sign-ins): the resource's events
 * from the audit log, as its aggregate type and ID name it. Asked without a context: the
 * service answers what the person may read of it, whichever organization the console is in.
 */
function HistoryPage(props: {
  title: string | undefined;
  tabs: ReactNode;
  resource: { type: string; id: string };
  label?: string;
  columns?: readonly EventColumn[];
  above?: ReactNode;
}) {
  const { title, tabs, resource, label = "History", columns, above } = props;
  return (
    <>
      <div className="title">
        <h1>{title ?? resource.id}</h1>
      </div>
      {above}
      {tabs}
      <EventLog label={label} filters={[{ filter: { case: "resource", value: resource } }]} ctx={undefined} columns={columns} empty="No events." />
    </>
  );
}

export function UserHistory() {
  const { userId } = useParams({ from: "/users/$userId/history" });
  return <HistoryPage title={useUserName(userId)} tabs={<ResourceTabs label="User" tabs={TABS.user(userId)} />} resource={{ type: "user", id: userId }} />;
}

/** Sign-in attempts are events of their own resource kind, under the user's ID. */
export function UserSignIns() {
  const { userId } = useParams({ from: "/users/$userId/sign-ins" });
  return (
    <HistoryPage
      title={useUserName(userId)}
      tabs={<ResourceTabs label="User" tabs={TABS.user(userId)} />}
      resource={{ type: "signin", id: userId }}
      label="Sign-ins"
      columns={SIGN_IN_COLUMNS}
    />
  );
}

function useUserName(userId: string): string | undefined {
  const { ctx } = useScope();
  const user = useQuery(PlatformUsers.method.getUser, { id: userId, ctx }).data?.user;
  return user && displayName(user);
}

export function OrganizationHistory() {
  const { orgId } = useParams({ from: "/organizations/$orgId/history" });
  const name = useQuery(PlatformOrganizations.method.getOrganization, { id: orgId }).data?.organization?.name;
  return <HistoryPage title={name} tabs={<ResourceTabs label="Organization" tabs={TABS.org(orgId)} />} resource={{ type: "org", id: orgId }} />;
}

export function ProjectHistory() {
  const { projectId } = useParams({ from: "/projects/$projectId/history" });
  const name = useQuery(PlatformProjects.method.getProject, { id: projectId }).data?.project?.project?.name;
  return <HistoryPage title={name} tabs={<ResourceTabs label="Project" tabs={TABS.project(projectId)} />} resource={{ type: "project", id: projectId }} />;
}

export function ApplicationHistory() {
  const { projectId, appId } = useParams({ from: "/projects/$projectId/apps/$appId/history" });
  const name = useQuery(PlatformApps.method.getApp, { id: appId }).data?.app?.app?.name;
  return <HistoryPage title={name} tabs={<ResourceTabs label="Application" tabs={TABS.app(projectId, appId)} />} resource={{ type: "app", id: appId }} />;
}

export function IdentityProviderHistory() {
  const { idpId } = useParams({ from: "/identity-providers/$idpId/history" });
  const { ctx } = useScope();
  const name = useQuery(PlatformIdentityProviders.method.getIDP, { id: idpId, ctx }).data?.idp?.idp?.name;
  return <HistoryPage title={name} tabs={<ResourceTabs label="Identity provider" tabs={TABS.idp(idpId)} />} resource={{ type: "idp", id: idpId }} />;
}

export function TargetHistory() {
  const { targetId } = useParams({ from: "/actions/targets/$targetId/history" });
  const name = useQuery(PlatformActions.method.getTarget, { id: targetId }).data?.target?.target?.name;
  return (
    <HistoryPage
      title={name}
      above={<ActionsTabs />}
      tabs={<ResourceTabs label="Target" tabs={TABS.target(targetId)} />}
      resource={{ type: "target", id: targetId }}
    />
  );
}
