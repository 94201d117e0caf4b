import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedLoginSettingsSchema, SetLoginSettingsSchema } from "../../../../gen/platform/settings/login/v3alpha/login_pb.js";
import type { PlatformLoginSettings } from "../../../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import type { SettingsKind } from "../../../domain/settings/kind.js";
import { resolveSettings, writeSettings } from "../../../domain/settings/store.js";
import type { Store } from "../../../store/database.js";
import { askedContext, principalOf } from "../../context.js";
import { handlerStore } from "../writes.js";
import { changeFromProto, resolvedToProto, settingsDetailsToProto } from "./codec.js";

/** `loginSettings`: the kind with this process's configured lockout default (domain/settings/login.ts). */
export function loginSettingsService({ store, loginSettings }: { store: Pick<Store, "forRequest">; loginSettings: SettingsKind }): ServiceImpl<typeof PlatformLoginSettings> {
  const { database, write } = handlerStore(store);
  return {
    async setLoginSettings(req, ctx) {
      const change = changeFromProto(SetLoginSettingsSchema, req.settings!, loginSettings);
      const at = askedContext(ctx.values);
      const details = await write(ctx, (tx) => writeSettings(tx, principalOf(ctx).userId, loginSettings, at, change));
      return { details: settingsDetailsToProto(details) };
    },
    async resolveLoginSettings(_req, ctx) {
      const at = askedContext(ctx.values);
      const { resolved, details } = await resolveSettings(database(ctx).db, loginSettings, at);
      return { details: settingsDetailsToProto(details), settings: resolvedToProto(ResolvedLoginSettingsSchema, resolved, at) };
    },
  };
}
