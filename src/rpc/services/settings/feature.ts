import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedFeatureSettingsSchema, SetFeatureSettingsSchema } from "../../../../gen/platform/settings/feature/v3alpha/feature_pb.js";
import type { PlatformFeatureSettings } from "../../../../gen/platform/settings/feature/v3alpha/feature_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import type { FeatureFlags } from "../../../domain/feature/flags.js";
import type { Store } from "../../../store/database.js";
import { handlerStore } from "../writes.js";
import { kindService } from "./kind-service.js";

export interface FeatureSettingsDeps {
  store: Pick<Store, "forRequest">;
  access: AccessEpoch;
  flags: FeatureFlags;
}

export function featureSettingsService({ store, access, flags }: FeatureSettingsDeps): ServiceImpl<typeof PlatformFeatureSettings> {
  // A flag gates services: its change reaches every process's cache like a change of access.
  const { database, changingAccess } = handlerStore(store, access);
  const settings = kindService({ database, write: changingAccess }, flags.kind, SetFeatureSettingsSchema, ResolvedFeatureSettingsSchema);
  return {
    setFeatures: (req, ctx) => settings.set(req.settings!, ctx),
    resolveFeatures: (_req, ctx) => settings.resolve(ctx),
  };
}
