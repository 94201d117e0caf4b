import type { ServiceImpl } from "@connectrpc/connect";
import type { PlatformNotifications } from "../../../../gen/platform/resources/notification/v3alpha/notification_service_pb.js";
import { retryNotification } from "../../../domain/notification/commands.js";
import { searchNotifications } from "../../../domain/notification/queries.js";
import { page } from "../../../store/search.js";
import { tenantOf } from "../../context.js";
import { searchResult } from "../convert.js";
import { handlerStore } from "../writes.js";
import { notificationFilterFromProto, notificationToProto } from "./convert.js";

/** The message log of an instance and its resending (notifications/outbox/ sends them). */
export function notificationsService(deps: { store: Parameters<typeof handlerStore>[0] }): ServiceImpl<typeof PlatformNotifications> {
  const { database, write } = handlerStore(deps.store);
  return {
    async searchNotifications(req, ctx) {
      const p = page(req.query);
      const found = await searchNotifications(database(ctx).db, tenantOf(ctx).id, req.filters.map(notificationFilterFromProto), p);
      return searchResult(found, p, notificationToProto);
    },
    async retryNotification(req, ctx) {
      const row = await write(ctx, (tx) => retryNotification(tx, tenantOf(ctx).id, req.id));
      return { notification: notificationToProto(row) };
    },
  };
}
