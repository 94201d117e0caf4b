import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedLanguageSettingsSchema, SetLanguageSettingsSchema } from "../../../../gen/platform/settings/language/v3alpha/language_pb.js";
import type { PlatformLanguageSettings } from "../../../../gen/platform/settings/language/v3alpha/language_service_pb.js";
import { LANGUAGE_SETTINGS } from "../../../domain/settings/language.js";
import { resolveSettings, writeSettings } from "../../../domain/settings/store.js";
import type { Store } from "../../../store/database.js";
import { askedContext, principalOf } from "../../context.js";
import { handlerStore } from "../writes.js";
import { changeFromProto, resolvedToProto, settingsDetailsToProto } from "./codec.js";

export function languageSettingsService({ store }: { store: Pick<Store, "forRequest"> }): ServiceImpl<typeof PlatformLanguageSettings> {
  const { database, write } = handlerStore(store);
  return {
    async setLanguages(req, ctx) {
      const change = changeFromProto(SetLanguageSettingsSchema, req.settings!, LANGUAGE_SETTINGS);
      const at = askedContext(ctx.values);
      const details = await write(ctx, (tx) => writeSettings(tx, principalOf(ctx).userId, LANGUAGE_SETTINGS, at, change));
      return { details: settingsDetailsToProto(details) };
    },
    async resolveLanguages(_req, ctx) {
      const at = askedContext(ctx.values);
      const { resolved, details } = await resolveSettings(database(ctx).db, LANGUAGE_SETTINGS, at);
      return { details: settingsDetailsToProto(details), settings: resolvedToProto(ResolvedLanguageSettingsSchema, resolved, at) };
    },
  };
}
