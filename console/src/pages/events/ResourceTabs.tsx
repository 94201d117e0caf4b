import { Link, linkOptions, type LinkComponentProps, type RegisteredRouter, type ValidateLinkOptionsArray } from "@tanstack/react-router";
import type { ReactNode } from "react";
import { usePermissions } from "../../api/permissions";

/**
 * A resource page's views, each a route of its own (its history's module loads only when
 * opened): the overview, the history, a user's sign-ins. Shown to those who may read the
 * log; to others the overview is all there is, and no tabs are needed.
 */
export function ResourceTabs<TOptions extends readonly unknown[]>(props: {
  label: string;
  tabs: ValidateLinkOptionsArray<RegisteredRouter, TOptions>;
}): ReactNode;
export function ResourceTabs({ label, tabs }: { label: string; tabs: readonly LinkComponentProps[] }): ReactNode {
  const { may } = usePermissions();
  if (!may("events.read")) return null;
  return (
    <nav className="tabs" aria-label={label}>
      {tabs.map((tab, i) => (
        <Link key={i} search={(prev) => prev} activeOptions={{ exact: true, includeSearch: false }} {...tab} />
      ))}
    </nav>
  );
}

/** The tabs of each kind of resource page. */
export const TABS = {
  user: (userId: string) =>
    linkOptions([
      { to: "/users/$userId", params: { userId }, children: "Overview" },
      { to: "/users/$userId/history", params: { userId }, children: "History" },
      { to: "/users/$userId/sign-ins", params: { userId }, children: "Sign-ins" },
    ]),
  org: (orgId: string) =>
    linkOptions([
      { to: "/organizations/$orgId", params: { orgId }, children: "Overview" },
      { to: "/organizations/$orgId/history", params: { orgId }, children: "History" },
    ]),
  project: (projectId: string) =>
    linkOptions([
      { to: "/projects/$projectId", params: { projectId }, children: "Overview" },
      { to: "/projects/$projectId/history", params: { projectId }, children: "History" },
    ]),
  app: (projectId: string, appId: string) =>
    linkOptions([
      { to: "/projects/$projectId/apps/$appId", params: { projectId, appId }, children: "Overview" },
      { to: "/projects/$projectId/apps/$appId/history", params: { projectId, appId }, children: "History" },
    ]),
  idp: (idpId: string) =>
    linkOptions([
      { to: "/identity-providers/$idpId", params: { idpId }, children: "Overview" },
      { to: "/identity-providers/$idpId/history", params: { idpId }, children: "History" },
    ]),
  target: (targetId: string) =>
    linkOptions([
      { to: "/actions/targets/$targetId", params: { targetId }, children: "Overview" },
      { to: "/actions/targets/$targetId/history", params: { targetId }, children: "History" },
    ]),
};
