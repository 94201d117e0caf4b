import type { AccessEpoch } from "../cache/access-epoch.js";
import { AccessCache, type MissCaching } from "../cache/access-cache.js";
import type { UnknownLookups } from "../cache/unknown-lookups.js";
import { instanceByDomain, type InstanceRef } from "../domain/instance/queries.js";
import type { Store } from "../store/database.js";

/**
 * The Host's host name selects the instance, for the RPC chain and the OpenID Connect
 * endpoints alike. An alias (127.0.0.1 for localhost) applies only when no instance has the
 * name itself. Cached per host until an access change (cache/access-epoch.ts) on any
 * process, so a blocked or deleted instance stops being served at once. Unknown hosts are
 * cached briefly too, and bounded per client address (cache/unknown-lookups.ts): any client
 * may send any Host.
 */
export class TenantResolver {
  readonly #byDomain: AccessCache<string, InstanceRef>;

  constructor(
    private readonly store: Pick<Store, "forRequest">,
    private readonly aliases: ReadonlyMap<string, string>,
    access: AccessEpoch,
    private readonly unknown: UnknownLookups,
    misses: MissCaching,
  ) {
    this.#byDomain = new AccessCache<string, InstanceRef>(access, 30_000, misses);
  }

  /**
   * The instance serving a lower-case host name (no port), or undefined; throws
   * TooManyUnknownLookups when the caller at `address` sent too many unknown ones.
   */
  resolve(hostname: string, signal: AbortSignal, address: string | undefined): Promise<InstanceRef | undefined> {
    return this.#byDomain.get(hostname, () =>
      this.unknown.load(address, async () => {
        const { db } = this.store.forRequest(signal);
        const alias = this.aliases.get(hostname);
        return (await instanceByDomain(db, hostname)) ?? (alias ? await instanceByDomain(db, alias) : undefined);
      }),
    );
  }
}
