import { useQuery } from "@connectrpc/connect-query";
import { Link } from "@tanstack/react-router";
import type { ReactNode } from "react";
import type { Editor, Resource } from "../../../../gen/platform/resources/event/v3alpha/event_pb";
import { PlatformApps } from "../../../../gen/platform/resources/app/v3alpha/app_service_pb";
import { usePermissions } from "../../api/permissions";
import { kindLabel } from "./resource-kinds";

/**
 * A row's resource: its kind in words and its ID, linked to the resource's page where the
 * console has one and the person may read it (a sign-in links to its user). A deleted
 * resource keeps its link: its page says it is gone.
 */
export function ResourceLink({ resource }: { resource: Resource | undefined }) {
  const type = resource?.type ?? "";
  const id = resource?.id ?? "";
  return (
    <>
      <span className="muted">{kindLabel(type)}</span>{" "}
      {id ? (
        <PageLink type={type} id={id}>
          <code>{id}</code>
        </PageLink>
      ) : (
        <span className="muted">no account</span>
      )}
    </>
  );
}

/** Who made the change: the user's name while the user exists (linked to them), else the ID the log has ("system" for the service itself). */
export function EditorName({ editor }: { editor: Editor | undefined }) {
  const name = editor?.displayName || editor?.userId || "";
  return editor?.displayName ? (
    <PageLink type="user" id={editor.userId}>
      {name}
    </PageLink>
  ) : (
    <>{name}</>
  );
}

const keep = <T,>(prev: T) => prev;

function PageLink({ type, id, children }: { type: string; id: string; children: ReactNode }) {
  const { may } = usePermissions();
  switch (type) {
    case "user":
    case "signin":
      return may("user.read") ? (
        <Link to="/users/$userId" params={{ userId: id }} search={keep}>
          {children}
        </Link>
      ) : (
        children
      );
    case "org":
      return may("org.read") ? (
        <Link to="/organizations/$orgId" params={{ orgId: id }} search={keep}>
          {children}
        </Link>
      ) : (
        children
      );
    case "project":
      return may("project.read") ? (
        <Link to="/projects/$projectId" params={{ projectId: id }} search={keep}>
          {children}
        </Link>
      ) : (
        children
      );
    case "app":
      return may("project.app.read") ? <AppLink appId={id}>{children}</AppLink> : children;
    case "idp":
      return may("idp.read") ? (
        <Link to="/identity-providers/$idpId" params={{ idpId: id }} search={keep}>
          {children}
        </Link>
      ) : (
        children
      );
    case "target":
      return may("action.target.read") ? (
        <Link to="/actions/targets/$targetId" params={{ targetId: id }} search={keep}>
          {children}
        </Link>
      ) : (
        children
      );
    default:
      return children;
  }
}

/** An application's page is under its project's, which the log does not name: asked of the application (once per application, however many rows name it). */
function AppLink({ appId, children }: { appId: string; children: ReactNode }) {
  const app = useQuery(PlatformApps.method.getApp, { id: appId }, { retry: false, staleTime: Infinity });
  const projectId = app.data?.app?.projectId;
  if (!projectId) return children;
  return (
    <Link to="/projects/$projectId/apps/$appId" params={{ projectId, appId }} search={keep}>
      {children}
    </Link>
  );
}
