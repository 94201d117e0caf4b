import { useQuery } from "@connectrpc/connect-query";
import { Link } from "@tanstack/react-router";
import { DeliveryStatus } from "../../../gen/platform/resources/action/v3alpha/delivery_pb";
import { PlatformActions } from "../../../gen/platform/resources/action/v3alpha/action_service_pb";
import { PlatformDomains } from "../../../gen/platform/resources/domain/v3alpha/domain_service_pb";
import { NotificationStatus } from "../../../gen/platform/resources/notification/v3alpha/notification_pb";
import { PlatformNotifications } from "../../../gen/platform/resources/notification/v3alpha/notification_service_pb";
import { PlatformOrganizations } from "../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { PlatformProjects } from "../../../gen/platform/resources/project/v3alpha/project_service_pb";
import { PlatformUsers } from "../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { useScope } from "../scope";

const ONE = { limit: 1 };

/**
 * The first page: how many organizations, people and projects the context has, and what
 * needs attention there (domains not yet proven, deliveries to your endpoints that failed,
 * messages that could not be sent), each only where the person may read it.
 */
export function Home() {
  const { ctx, orgId } = useScope();
  const { may, loading, error } = usePermissions();
  const orgs = useQuery(PlatformOrganizations.method.searchOrganizations, { query: ONE }, { enabled: may("org.read") && !orgId });
  const users = useQuery(PlatformUsers.method.searchUsers, { query: ONE, ctx }, { enabled: may("user.read") });
  const projects = useQuery(PlatformProjects.method.searchProjects, { query: ONE, ctx }, { enabled: may("project.read") });
  const unverified = useQuery(
    PlatformDomains.method.searchDomains,
    { query: ONE, ctx, filters: [{ filter: { case: "verified", value: { isVerified: false } } }] },
    { enabled: may("org.domain.read") },
  );
  const failedDeliveries = useQuery(
    PlatformActions.method.searchDeliveries,
    { query: ONE, filters: [{ filter: { case: "status", value: { status: DeliveryStatus.FAILED } } }] },
    { enabled: may("execution.read") && !orgId },
  );
  const failedMessages = useQuery(
    PlatformNotifications.method.searchNotifications,
    { query: ONE, filters: [{ filter: { case: "status", value: { status: NotificationStatus.FAILED } } }] },
    { enabled: may("instance.notification.read") && !orgId },
  );
  if (loading) return <p role="status">Loading…</p>;
  if (error) return <ApiError error={error} />;
  const counts = [
    { label: "Organizations", query: orgs, to: "/organizations" as const, shown: may("org.read") && !orgId },
    { label: "People and service accounts", query: users, to: "/users" as const, shown: may("user.read") },
    { label: "Projects", query: projects, to: "/projects" as const, shown: may("project.read") },
  ].filter((c) => c.shown);
  const attention = [
    { label: "domains not yet verified", query: unverified, to: "/organizations" as const, shown: may("org.domain.read") },
    { label: "deliveries to your endpoints failed", query: failedDeliveries, to: "/actions/deliveries" as const, shown: may("execution.read") && !orgId },
    { label: "messages could not be sent", query: failedMessages, to: "/messages" as const, shown: may("instance.notification.read") && !orgId },
  ].filter((a) => a.shown && Number(a.query.data?.details?.totalResult ?? 0n) > 0);
  if (counts.length === 0) {
    return (
      <>
        <h1>Console</h1>
        <p>You have no administration rights here. Ask an administrator for a role in this instance or one of its organizations.</p>
      </>
    );
  }
  return (
    <>
      <h1>Home</h1>
      <ul className="cards">
        {counts.map((c) => (
          <li key={c.label} className="card">
            <span className="count">{c.query.data ? String(c.query.data.details?.totalResult ?? 0n) : "…"}</span>
            <Link to={c.to} search={(prev) => prev}>
              {c.label}
            </Link>
            <ApiError error={c.query.error} />
          </li>
        ))}
      </ul>
      <h2>Needs attention</h2>
      {attention.length === 0 ? (
        <p>Nothing needs your attention.</p>
      ) : (
        <ul className="attention">
          {attention.map((a) => (
            <li key={a.label}>
              <strong>{String(a.query.data?.details?.totalResult ?? 0n)}</strong>{" "}
              <Link to={a.to} search={(prev) => prev}>
                {a.label}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
