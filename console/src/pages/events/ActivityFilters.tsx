import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useMemo, useState } from "react";
import { Button, ComboBox, Input, Label, ListBox, ListBoxItem, Popover, TextField } from "react-aria-components";
import { PlatformEvents } from "../../../../gen/platform/resources/event/v3alpha/event_service_pb";
import { ApiError } from "../../components/ApiError";
import { SearchBox } from "../../components/SearchBox";
import { SelectField } from "../../components/SelectField";
import { useDebounced } from "../../components/useDebounced";
import type { Scope } from "../../scope";
import { RESOURCE_KINDS, type ResourceKind } from "./resource-kinds";
import type { EventFilters } from "./use-event-log";

interface Chosen {
  /** `type:<event type>`, `group:<dotted prefix>`, or "" for any event. */
  event: string;
  resourceType: ResourceKind | "any";
  resourceId: string;
  editor: string;
  /** As a datetime-local input has them (the browser's time zone); "" for no bound. */
  since: string;
  until: string;
}

const NOTHING: Chosen = { event: "", resourceType: "any", resourceId: "", editor: "", since: "", until: "" };
const KIND_OPTIONS = [{ key: "any", label: "Any" } as const, ...RESOURCE_KINDS];

/**
 * The Activity page's filters and the search filters they make: an event type or group (as
 * ListEventTypes names them), a resource's kind and ID, the editor's user ID, a time range.
 * What is typed asks the service once per pause (each change restarts the stream too).
 */
export function useActivityFilters(ctx: Scope["ctx"]) {
  const [chosen, setChosen] = useState<Chosen>(NOTHING);
  const settled = useDebounced(chosen, 300);
  const filters = useMemo(() => searchFilters(settled), [settled]);
  const set = (change: Partial<Chosen>) => setChosen((c) => ({ ...c, ...change }));
  const control = (
    <div className="filters">
      <EventTypeChoice ctx={ctx} value={chosen.event} onChange={(event) => set({ event })} />
      <SelectField label="Resource" value={chosen.resourceType} options={KIND_OPTIONS} onChange={(resourceType) => set({ resourceType })} />
      <SearchBox label="Resource ID" value={chosen.resourceId} onChange={(resourceId) => set({ resourceId })} />
      <SearchBox label="Editor (user ID)" value={chosen.editor} onChange={(editor) => set({ editor })} />
      <TimeField label="From" value={chosen.since} onChange={(since) => set({ since })} />
      <TimeField label="Until" value={chosen.until} onChange={(until) => set({ until })} />
    </div>
  );
  return { filters, control };
}

function searchFilters(c: Chosen): EventFilters {
  const [kind, name] = c.event.split(/:(.*)/s);
  const resourceId = c.resourceId.trim();
  const editor = c.editor.trim();
  const since = moment(c.since);
  const until = moment(c.until);
  return [
    ...(kind === "type" && name ? [{ filter: { case: "types" as const, value: { types: [name] } } }] : []),
    ...(kind === "group" && name ? [{ filter: { case: "types" as const, value: { groups: [name] } } }] : []),
    // An ID means something only with its kind: the log's resources are (kind, ID) pairs.
    ...(c.resourceType !== "any"
      ? [
          resourceId
            ? { filter: { case: "resource" as const, value: { type: c.resourceType, id: resourceId } } }
            : { filter: { case: "resourceTypes" as const, value: { types: [c.resourceType] } } },
        ]
      : []),
    ...(editor ? [{ filter: { case: "editor" as const, value: { userId: editor } } }] : []),
    ...(since || until ? [{ filter: { case: "timeRange" as const, value: { since, until } } }] : []),
  ];
}

/** A datetime-local value as a timestamp; a value still being typed (not yet a date) bounds nothing. */
function moment(local: string) {
  const date = new Date(local);
  return local && !Number.isNaN(date.getTime()) ? timestampFromDate(date) : undefined;
}

function TimeField({ label, value, onChange }: { label: string; value: string; onChange(value: string): void }) {
  return (
    <TextField className="field" type="datetime-local" value={value} onChange={onChange}>
      <Label>{label}</Label>
      <Input />
    </TextField>
  );
}

const ANY_EVENT = { id: "", name: "Any event" };

/** Event types and their groups (a group written `user.*`), found by typing part of the name. */
function EventTypeChoice({ ctx, value, onChange }: { ctx: Scope["ctx"]; value: string; onChange(value: string): void }) {
  const listed = useQuery(PlatformEvents.method.listEventTypes, { ctx }, { staleTime: Infinity });
  const items = useMemo(
    () => [
      ANY_EVENT,
      ...(listed.data?.groups ?? []).map((g) => ({ id: `group:${g}`, name: `${g}.*` })),
      ...(listed.data?.types ?? []).map((t) => ({ id: `type:${t}`, name: t })),
    ],
    [listed.data],
  );
  return (
    <>
      <ComboBox className="field event-type" defaultItems={items} selectedKey={value} onSelectionChange={(key) => onChange(key === null ? "" : String(key))}>
        <Label>Event</Label>
        <div className="combo">
          <Input />
          <Button aria-label="Show event types">▾</Button>
        </div>
        <Popover>
          <ListBox>{(item: typeof ANY_EVENT) => <ListBoxItem id={item.id}>{item.name}</ListBoxItem>}</ListBox>
        </Popover>
      </ComboBox>
      <ApiError error={listed.error} />
    </>
  );
}
