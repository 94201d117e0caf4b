import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { PlatformEvents } from "../../../../gen/platform/resources/event/v3alpha/event_service_pb.js";
import { decodeContinuation, encodeContinuation, formatPosition, parsePosition } from "../../../domain/audit/positions.js";
import { newestPosition, searchEvents, type LogScope } from "../../../domain/audit/queries.js";
import { eventGroups } from "../../../domain/action/execution/events.js";
import { REDACTED_EVENT_TYPES } from "../../../domain/audit/redaction.js";
import { SYSTEM_STREAM } from "../../../store/instance-sequence.js";
import { systemKey, tenantOf, visibleOrgs } from "../../context.js";
import { handlerStore } from "../writes.js";
import { eventFilterFromProto, eventToProto } from "./convert.js";
import { followEvents, type WatchSettings, type WatchSlots } from "./watch.js";

const DEFAULT_LIMIT = 100;

/** Whose events the caller reads: the ctx's instance (the system's own in the system context), within what it may see. */
function logScope(ctx: HandlerContext): LogScope {
  const orgs = visibleOrgs(ctx);
  return { instanceId: ctx.values.get(systemKey) ? SYSTEM_STREAM : tenantOf(ctx).id, ...(orgs && { orgs }) };
}

/** The audit log: searching it, following it, and what its filters may name (domain/audit). */
export function eventsService(deps: {
  store: Parameters<typeof handlerStore>[0];
  eventWatch: WatchSettings & { slots: WatchSlots };
  shutdown: AbortSignal;
}): ServiceImpl<typeof PlatformEvents> {
  const { database } = handlerStore(deps.store);
  return {
    async searchEvents(req, ctx) {
      const scope = logScope(ctx);
      const filters = req.filters.map(eventFilterFromProto);
      // What a continuation must come back with: the same search, by the same caller's view.
      const search = [filters, req.asc, req.after, scope.instanceId, scope.orgs && [...scope.orgs].sort()];
      const { db } = database(ctx);
      // Read first: every event up to it is final now, so the search sees it too.
      const top = await newestPosition(db, scope.instanceId);
      const found = await searchEvents(db, scope, filters, {
        asc: req.asc,
        limit: req.limit || DEFAULT_LIMIT,
        ...(req.continuation && { from: decodeContinuation(req.continuation, search) }),
        ...(req.after && { after: parsePosition(req.after, "after") }),
      });
      return { result: found.events.map(eventToProto), continuation: found.next ? encodeContinuation(found.next, search) : "", position: formatPosition(top) };
    },
    watchEvents(req, ctx) {
      return followEvents(database(ctx).db, logScope(ctx), req.filters.map(eventFilterFromProto), req.after ? parsePosition(req.after, "after") : undefined, {
        ...deps.eventWatch,
        signal: AbortSignal.any([ctx.signal, deps.shutdown]),
      });
    },
    async listEventTypes() {
      return { types: [...REDACTED_EVENT_TYPES], groups: eventGroups(REDACTED_EVENT_TYPES) };
    },
  };
}
