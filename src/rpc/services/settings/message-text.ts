import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedMessageTextSchema, SetMessageTextSchema } from "../../../../gen/platform/settings/message_text/v3alpha/message_text_pb.js";
import type { PlatformMessageTextSettings } from "../../../../gen/platform/settings/message_text/v3alpha/message_text_service_pb.js";
import { invalidArgument } from "../../../domain/errors.js";
import { resolveSettings, writeSettings } from "../../../domain/settings/rows.js";
import { KINDS } from "../../../domain/notification/kinds.js";
import { requestedMessageText } from "../../../domain/settings/message-text.js";
import { written } from "../../../domain/notification/template.js";
import type { Store } from "../../../store/database.js";
import { askedContext, editorOf } from "../../context.js";
import { handlerStore } from "../writes.js";
import { changeFromProto, resolvedToProto, settingsDetailsToProto } from "./codec.js";

export function messageTextSettingsService({ store }: { store: Pick<Store, "forRequest"> }): ServiceImpl<typeof PlatformMessageTextSettings> {
  const { database, write } = handlerStore(store);
  return {
    async setMessageText(req, ctx) {
      const { kind, settings } = requestedMessageText(req.kind, req.language);
      if (req.settings!.subject && !settings.properties.subject) throw invalidArgument(`subject: ${kind} messages are sent by SMS, which has no subject`);
      const change = changeFromProto(SetMessageTextSchema, req.settings!, settings);
      const at = askedContext(ctx.values);
      const details = await write(ctx, (tx) => writeSettings(tx, editorOf(ctx), settings, at, change));
      return { details: settingsDetailsToProto(details) };
    },
    async resolveMessageText(req, ctx) {
      const { kind, settings } = requestedMessageText(req.kind, req.language);
      const at = askedContext(ctx.values);
      const { resolved, details } = await resolveSettings(database(ctx).db, settings, at);
      return {
        details: settingsDetailsToProto(details),
        settings: resolvedToProto(ResolvedMessageTextSchema, resolved, at),
        placeholders: KINDS[kind].placeholders.map(written),
      };
    },
  };
}
