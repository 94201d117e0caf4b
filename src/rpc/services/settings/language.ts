import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedLanguageSettingsSchema, SetLanguageSettingsSchema } from "../../../../gen/platform/settings/language/v3alpha/language_pb.js";
import type { PlatformLanguageSettings } from "../../../../gen/platform/settings/language/v3alpha/language_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import { LANGUAGE_SETTINGS } from "../../../domain/settings/language.js";
import type { Store } from "../../../store/database.js";
import { handlerStore } from "../writes.js";
import { kindService } from "./kind-service.js";

export function languageSettingsService({
  store,
  access,
}: {
  store: Pick<Store, "forRequest">;
  access: AccessEpoch;
}): ServiceImpl<typeof PlatformLanguageSettings> {
  // Discovery's ui_locales_supported is cached per access epoch (oidc/helpers/lookups.ts): a change
  // reaches every process's cache like a change of access.
  const { database, changingAccess } = handlerStore(store, access);
  const settings = kindService({ database, write: changingAccess }, LANGUAGE_SETTINGS, SetLanguageSettingsSchema, ResolvedLanguageSettingsSchema);
  return {
    setLanguages: (req, ctx) => settings.set(req.settings!, ctx),
    resolveLanguages: (_req, ctx) => settings.resolve(ctx),
  };
}
