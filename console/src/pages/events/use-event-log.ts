import type { MessageInitShape } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { useInfiniteQuery, useTransport } from "@connectrpc/connect-query";
import { useEffect, useMemo, useRef, useState } from "react";
import type { RequestContextSchema } from "../../../../gen/platform/object/v3alpha/object_pb";
import type { Event, EventFilterSchema } from "../../../../gen/platform/resources/event/v3alpha/event_pb";
import { PlatformEvents } from "../../../../gen/platform/resources/event/v3alpha/event_service_pb";
import { followLog, type LiveState } from "./follow";
import { followFrom, withoutRepeats } from "./positions";

export type EventFilters = MessageInitShape<typeof EventFilterSchema>[];
type Context = MessageInitShape<typeof RequestContextSchema> | undefined;

const PAGE = 50;

/**
 * The events a page shows: the search's pages, newest first, "Load more" asking for the next
 * by its continuation; above them what the log's stream brought since, each event once. The
 * search is never refetched on its own (the stream keeps it current); a page opened again
 * while the query cache holds its pages (five minutes) shows them, and the stream brings
 * what it missed.
 */
export function useEventLog(filters: EventFilters, ctx: Context) {
  const search = useInfiniteQuery(
    PlatformEvents.method.searchEvents,
    { filters, ctx, limit: PAGE, continuation: "" },
    { pageParamKey: "continuation", getNextPageParam: (page) => page.continuation || undefined, staleTime: Infinity },
  );
  const searched = useMemo(() => search.data?.pages.flatMap((p) => p.result) ?? [], [search.data]);
  // Once the first page is in (and while it stays, a failed refetch too): the stream starts after it.
  const live = useLiveEvents(filters, ctx, search.data ? { position: search.data.pages[0]?.position, events: searched } : undefined);
  const events = useMemo(() => withoutRepeats(live.events, searched), [live.events, searched]);
  return {
    events,
    live: live.state,
    pending: search.isPending,
    error: search.error,
    more: search.hasNextPage,
    loadingMore: search.isFetchingNextPage,
    loadMore: () => void search.fetchNextPage(),
  };
}

interface Stream {
  key: string;
  events: Event[];
  state: LiveState;
}

/** A request's identity for the stream: the filters hold timestamps, whose seconds are bigints. */
const keyOf = (value: unknown) => JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v));

/**
 * WatchEvents with the page's filters, after how far the search read the log and the latest
 * of the events it shows (`shown`; undefined: not searched yet), newest first. Other filters or context end the stream and
 * start another (with the search that goes with them); so does leaving the page. An event
 * the stream sends twice (its replay after the position a page started from may hold one the
 * search had) is kept once.
 */
function useLiveEvents(filters: EventFilters, ctx: Context, shown: { position: string | undefined; events: readonly Event[] } | undefined): Stream {
  const transport = useTransport();
  const key = keyOf({ filters, ctx });
  const request = useRef({ filters, ctx });
  request.current = { filters, ctx };
  const searched = useRef(shown);
  searched.current = shown;
  const ready = shown !== undefined;
  const [stream, setStream] = useState<Stream>({ key, events: [], state: { state: "connecting" } });
  useEffect(() => {
    if (!ready) return;
    const abort = new AbortController();
    const client = createClient(PlatformEvents, transport);
    const asked = request.current;
    setStream({ key, events: [], state: { state: "connecting" } });
    void followLog(
      (after, signal) => client.watchEvents({ ...asked, after }, { signal }),
      followFrom(searched.current?.position, searched.current?.events ?? []),
      abort.signal,
      {
        event: (e) => setStream((s) => (s.key !== key || s.events.some((had) => had.position === e.position) ? s : { ...s, events: [e, ...s.events] })),
        state: (state) => setStream((s) => (s.key === key ? { ...s, state } : s)),
      },
    );
    return () => abort.abort();
  }, [key, ready, transport]);
  return stream.key === key ? stream : { key, events: [], state: { state: "connecting" } };
}
