import { AccessCache } from "../../../cache/access-cache.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import type { SecretBox } from "../../../crypto/encryption.js";
import { activeProvider } from "../../../domain/notification-provider/queries.js";
import type { Db } from "../../../store/db.js";
import type { ProviderFamily } from "../../../domain/notification-provider/model.js";
import { sendableProvider, type SendableProvider } from "./provider.js";

/**
 * Each instance's active provider per family, kept per process until the next change of
 * access: every write of a provider advances it (rpc/services/notification-providers), here
 * at its commit and elsewhere by NOTIFY, so an activation applies to the next message.
 */
export class ActiveProviders {
  readonly #cache: AccessCache<string, { provider: SendableProvider | undefined }>;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    access: AccessEpoch,
    ttlMs = 60_000,
  ) {
    this.#cache = new AccessCache(access, ttlMs);
  }

  /** The instance's own active provider of the family; undefined when it has none. */
  async of(instanceId: string, family: ProviderFamily): Promise<SendableProvider | undefined> {
    const found = await this.#cache.get(`${instanceId} ${family}`, async () => {
      const row = await activeProvider(this.db, instanceId, family);
      return { provider: row && sendableProvider(row, this.box) };
    });
    return found!.provider;
  }
}
