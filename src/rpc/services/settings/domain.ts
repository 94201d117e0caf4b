import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedDomainSettingsSchema, SetDomainSettingsSchema } from "../../../../gen/platform/settings/domain/v3alpha/domain_pb.js";
import type { PlatformDomainSettings } from "../../../../gen/platform/settings/domain/v3alpha/domain_service_pb.js";
import { DOMAIN_SETTINGS } from "../../../domain/settings/domain.js";
import type { Store } from "../../../store/database.js";
import { handlerStore } from "../writes.js";
import { kindService } from "./kind-service.js";

export function domainSettingsService({ store }: { store: Pick<Store, "forRequest"> }): ServiceImpl<typeof PlatformDomainSettings> {
  const settings = kindService(handlerStore(store), DOMAIN_SETTINGS, SetDomainSettingsSchema, ResolvedDomainSettingsSchema);
  return {
    setDomainSettings: (req, ctx) => settings.set(req.settings!, ctx),
    resolveDomainSettings: (_req, ctx) => settings.resolve(ctx),
  };
}
