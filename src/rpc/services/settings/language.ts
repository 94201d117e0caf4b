import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedLanguageSettingsSchema, SetLanguageSettingsSchema } from "../../../../gen/platform/settings/language/v3alpha/language_pb.js";
import type { PlatformLanguageSettings } from "../../../../gen/platform/settings/language/v3alpha/language_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import { LANGUAGE_SETTINGS } from "../../../domain/settings/language.js";
import { resolveSettings, writeSettings } from "../../../domain/settings/store.js";
import type { Store } from "../../../store/database.js";
import { askedContext, principalOf } from "../../context.js";
import { handlerStore } from "../writes.js";
import { changeFromProto, resolvedToProto, settingsDetailsToProto } from "./codec.js";

export function languageSettingsService({ store, access }: { store: Pick<Store, "forRequest">; access: AccessEpoch }): ServiceImpl<typeof PlatformLanguageSettings> {
  // Discovery's ui_locales_supported is cached per access epoch (oidc/lookups.ts): a change
  // reaches every process's cache like a change of access.
  const { database, changingAccess } = handlerStore(store, access);
  return {
    async setLanguages(req, ctx) {
      const change = changeFromProto(SetLanguageSettingsSchema, req.settings!, LANGUAGE_SETTINGS);
      const at = askedContext(ctx.values);
      const details = await changingAccess(ctx, (tx) => writeSettings(tx, principalOf(ctx).userId, LANGUAGE_SETTINGS, at, change));
      return { details: settingsDetailsToProto(details) };
    },
    async resolveLanguages(_req, ctx) {
      const at = askedContext(ctx.values);
      const { resolved, details } = await resolveSettings(database(ctx).db, LANGUAGE_SETTINGS, at);
      return { details: settingsDetailsToProto(details), settings: resolvedToProto(ResolvedLanguageSettingsSchema, resolved, at) };
    },
  };
}
