import { Button } from "react-aria-components";
import { ApiError } from "../../components/ApiError";
import { CHANGE_COLUMNS, type EventColumn } from "./columns";
import { EventRow } from "./EventRow";
import type { LiveState } from "./follow";
import { useEventLog, type EventFilters } from "./use-event-log";
import type { Scope } from "../../scope";

/**
 * The audit log as every page shows it (Activity, a resource's history, a user's sign-ins):
 * the events the filters find, newest first, with "Load more" for older ones and new ones
 * arriving live above them. Pages give only the filters, the context and the columns.
 */
export function EventLog(props: { label: string; filters: EventFilters; ctx: Scope["ctx"]; columns?: readonly EventColumn[]; empty: string }) {
  const { label, filters, ctx, columns = CHANGE_COLUMNS, empty } = props;
  const log = useEventLog(filters, ctx);
  return (
    <>
      <LiveStatus live={log.live} />
      <ApiError error={log.error} />
      <table className="log" aria-label={label}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col">
                {c.label}
              </th>
            ))}
            <th scope="col">
              <span className="sr-only">Details</span>
            </th>
          </tr>
        </thead>
        {log.events.length === 0 ? (
          <tbody>
            <tr>
              <td className="empty" colSpan={columns.length + 1}>
                {log.pending ? "Loading…" : empty}
              </td>
            </tr>
          </tbody>
        ) : (
          log.events.map((e) => <EventRow key={e.position} event={e} columns={columns} />)
        )}
      </table>
      {log.more && (
        <div className="pager">
          <Button onPress={log.loadMore} isDisabled={log.loadingMore}>
            {log.loadingMore ? "Loading…" : "Load more"}
          </Button>
        </div>
      )}
    </>
  );
}

/** Whether new events arrive by themselves, said where a screen reader hears it too. */
function LiveStatus({ live }: { live: LiveState }) {
  return (
    <p className="live" role="status">
      {live.state === "live" ? (
        <>
          <span className="badge ok">Live</span> New events appear here as they happen.
        </>
      ) : live.state === "connecting" ? (
        "Connecting for live updates…"
      ) : live.state === "retrying" ? (
        <>
          <span className="badge off">Reconnecting</span> Live updates were cut off ({live.error}); asking again shortly.
        </>
      ) : (
        <>
          <span className="badge off">Not live</span> {live.error}
        </>
      )}
    </p>
  );
}
