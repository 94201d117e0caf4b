import { useId, useState } from "react";
import { Button } from "react-aria-components";
import type { Event } from "../../../../gen/platform/resources/event/v3alpha/event_pb";
import { when, type EventColumn } from "./columns";
import { EditorName } from "./ResourceLink";

/**
 * One event: its columns, and a button that opens its details below it (a row of its own in
 * the row's own tbody): who made it and from where, the resource, its position in the log,
 * and its payload as formatted JSON (the service left out every secret).
 */
export function EventRow({ event, columns }: { event: Event; columns: readonly EventColumn[] }) {
  const [open, setOpen] = useState(false);
  const details = useId();
  const [first, ...rest] = columns;
  return (
    <tbody>
      <tr>
        {first && (
          <th scope="row" data-label={first.label}>
            {first.cell(event)}
          </th>
        )}
        {rest.map((c) => (
          <td key={c.label} data-label={c.label}>
            {c.cell(event)}
          </td>
        ))}
        <td>
          <Button
            aria-expanded={open}
            aria-controls={open ? details : undefined}
            aria-label={`${open ? "Hide details" : "Details"}: ${event.type}, ${when(event)}`}
            onPress={() => setOpen(!open)}
          >
            {open ? "Hide details" : "Details"}
          </Button>
        </td>
      </tr>
      {open && (
        <tr id={details} className="details">
          <td colSpan={columns.length + 1}>
            <EventDetails event={event} />
          </td>
        </tr>
      )}
    </tbody>
  );
}

/** `app:<client id>` and `pat:<token id>` (the log's words for an editor's client) said in words. */
function clientInWords(client: string): string {
  if (client.startsWith("app:")) return `Application ${client.slice(4)}`;
  if (client.startsWith("pat:")) return `Personal access token ${client.slice(4)}`;
  return client;
}

function EventDetails({ event }: { event: Event }) {
  const editor = event.editor;
  const none = <span className="muted">None</span>;
  return (
    <dl className="facts">
      <dt>Editor</dt>
      <dd>
        <EditorName editor={editor} /> {editor?.displayName && <code>{editor.userId}</code>}
      </dd>
      <dt>Client</dt>
      <dd>{editor?.client ? clientInWords(editor.client) : none}</dd>
      <dt>IP address</dt>
      <dd>{editor?.ipAddress || none}</dd>
      <dt>User agent</dt>
      <dd>{editor?.userAgent || none}</dd>
      <dt>Resource</dt>
      <dd>
        {event.resource?.type} <code>{event.resource?.id}</code>
      </dd>
      {event.organizationId && (
        <>
          <dt>Organization</dt>
          <dd>
            <code>{event.organizationId}</code>
          </dd>
        </>
      )}
      <dt>Sequence</dt>
      <dd>{event.sequence.toString()}</dd>
      <dt>Position</dt>
      <dd>
        <code>{event.position}</code>
      </dd>
      <dt>Payload</dt>
      <dd>
        <pre className="payload">{JSON.stringify(event.payload ?? {}, null, 2)}</pre>
      </dd>
    </dl>
  );
}
