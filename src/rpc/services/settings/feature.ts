import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedFeatureSettingsSchema, SetFeatureSettingsSchema } from "../../../../gen/platform/settings/feature/v3alpha/feature_pb.js";
import type { PlatformFeatureSettings } from "../../../../gen/platform/settings/feature/v3alpha/feature_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import type { FeatureFlags } from "../../../domain/feature/flags.js";
import { resolveSettings, writeSettings } from "../../../domain/settings/store.js";
import type { Store } from "../../../store/database.js";
import { askedContext, principalOf } from "../../context.js";
import { handlerStore } from "../writes.js";
import { changeFromProto, resolvedToProto, settingsDetailsToProto } from "./codec.js";

export interface FeatureSettingsDeps {
  store: Pick<Store, "forRequest">;
  access: AccessEpoch;
  flags: FeatureFlags;
}

export function featureSettingsService({ store, access, flags }: FeatureSettingsDeps): ServiceImpl<typeof PlatformFeatureSettings> {
  // A flag gates services: its change reaches every process's cache like a change of access.
  const { database, changingAccess } = handlerStore(store, access);
  return {
    async setFeatures(req, ctx) {
      const change = changeFromProto(SetFeatureSettingsSchema, req.settings!, flags.kind);
      const at = askedContext(ctx.values);
      const details = await changingAccess(ctx, (tx) => writeSettings(tx, principalOf(ctx).userId, flags.kind, at, change));
      return { details: settingsDetailsToProto(details) };
    },
    async resolveFeatures(_req, ctx) {
      const at = askedContext(ctx.values);
      const { resolved, details } = await resolveSettings(database(ctx).db, flags.kind, at);
      return { details: settingsDetailsToProto(details), settings: resolvedToProto(ResolvedFeatureSettingsSchema, resolved, at) };
    },
  };
}
