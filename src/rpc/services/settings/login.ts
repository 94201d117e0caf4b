import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedLoginSettingsSchema, SetLoginSettingsSchema } from "../../../../gen/platform/settings/login/v3alpha/login_pb.js";
import type { PlatformLoginSettings } from "../../../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import type { SettingsKind } from "../../../domain/settings/kind.js";
import type { Store } from "../../../store/database.js";
import { handlerStore } from "../writes.js";
import { kindService } from "./kind-service.js";

/** `loginSettings`: the kind with this process's configured lockout default (domain/settings/login.ts). */
export function loginSettingsService({
  store,
  loginSettings,
}: {
  store: Pick<Store, "forRequest">;
  loginSettings: SettingsKind;
}): ServiceImpl<typeof PlatformLoginSettings> {
  const settings = kindService(handlerStore(store), loginSettings, SetLoginSettingsSchema, ResolvedLoginSettingsSchema);
  return {
    setLoginSettings: (req, ctx) => settings.set(req.settings!, ctx),
    resolveLoginSettings: (_req, ctx) => settings.resolve(ctx),
  };
}
