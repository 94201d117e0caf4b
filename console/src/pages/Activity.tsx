import { useQuery } from "@connectrpc/connect-query";
import { PlatformOrganizations } from "../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { useScope } from "../scope";
import { useActivityFilters } from "./events/ActivityFilters";
import { EventLog } from "./events/EventLog";

/**
 * The audit log of the context the console acts in: the instance's (every change and
 * sign-in) or one organization's (its resources' and its users'), searched by the filters,
 * newest first, live while the page is open.
 */
export function Activity() {
  const { orgId, ctx } = useScope();
  const { filters, control } = useActivityFilters(ctx);
  const org = useQuery(PlatformOrganizations.method.getOrganization, { id: orgId ?? "" }, { enabled: Boolean(orgId) });
  return (
    <>
      <div className="title">
        <h1>Activity</h1>
      </div>
      <p className="muted">
        {orgId
          ? `Changes to the resources of ${org.data?.organization?.name ?? "this organization"}, and sign-ins of its users.`
          : "Every change in the instance, and every sign-in."}
      </p>
      {control}
      <EventLog label="Activity" filters={filters} ctx={ctx} empty="No events match." />
    </>
  );
}
