import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { PlatformSessions } from "../../../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import { createSession, deleteSession, patchSession, type SessionDeps, type SessionStore } from "../../../domain/session/commands.js";
import { getSession, searchSessions } from "../../../domain/session/queries.js";
import type { Store } from "../../../store/database.js";
import { page } from "../../../store/search.js";
import { actorOf, clientAddressKey, principalOf, selfOnlyKey, tenantOf } from "../../context.js";
import { detailsToProto, searchResult } from "../convert.js";
import { handlerStore } from "../writes.js";
import { challengeAnswersToProto, changesFromProto, sessionFilterFromProto, sessionToProto, userAgentFromProto } from "./convert.js";

export interface SessionsDeps {
  store: Pick<Store, "forRequest">;
  access: AccessEpoch;
  sessions: SessionDeps;
}

/** Translates between the API and domain/session, where the rules live. */
export function sessionsService({ store, access, sessions }: SessionsDeps): ServiceImpl<typeof PlatformSessions> {
  const { database, write } = handlerStore(store, access);
  const storeOf = (ctx: HandlerContext): SessionStore => ({ db: database(ctx).db, transact: (fn) => write(ctx, fn), accessChanged: () => access.advance() });
  return {
    async createSession(req, ctx) {
      const userAgent = userAgentFromProto(req.userAgent, { ip: ctx.values.get(clientAddressKey), userAgent: ctx.requestHeader.get("user-agent") });
      const created = await createSession(storeOf(ctx), sessions, actorOf(ctx), changesFromProto(req), userAgent);
      return {
        details: detailsToProto(created.details),
        sessionId: created.details.id,
        sessionToken: created.token,
        challenges: challengeAnswersToProto(created.challenges),
      };
    },
    async getSession(req, ctx) {
      return { session: sessionToProto(await getSession(database(ctx).db, tenantOf(ctx).id, req.id)) };
    },
    async searchSessions(req, ctx) {
      const p = page(req.query);
      const found = await searchSessions(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(sessionFilterFromProto),
        page: p,
        ...(ctx.values.get(selfOnlyKey) && { ownerId: principalOf(ctx).userId }),
      });
      return { ...searchResult(found, p, sessionToProto), sortingColumn: req.sortingColumn };
    },
    async patchSession(req, ctx) {
      const patched = await patchSession(storeOf(ctx), sessions, actorOf(ctx), req.id, req.sessionToken, changesFromProto(req));
      return { details: detailsToProto(patched.details), sessionToken: patched.token, challenges: challengeAnswersToProto(patched.challenges) };
    },
    async deleteSession(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => deleteSession(tx, actorOf(ctx), req.id))) };
    },
  };
}
