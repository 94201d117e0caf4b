import type Provider from "oidc-provider";
import { createProvider, type ProviderDeps } from "./configuration.js";
import type { SigningKeys } from "../models/signing-keys.js";

export interface ProviderEntry {
  provider: Provider;
  /** The provider's request handler, built once (Koa composes its middleware per call of callback()). */
  handle: ReturnType<Provider["callback"]>;
  keysVersion: string;
}

/**
 * One provider per issuer (an instance at one of its host names), built on first use and
 * kept in a bounded cache, least recently used out first. A provider holds its key set, so
 * it is rebuilt when the instance's keys change (signing-keys.ts decides when).
 */
export class Providers {
  readonly #entries = new Map<string, ProviderEntry>();

  constructor(
    private readonly keys: SigningKeys,
    private readonly deps: Omit<ProviderDeps, "instanceId" | "keys">,
    private readonly maxEntries: number,
  ) {}

  async get(issuer: string, instanceId: string): Promise<ProviderEntry> {
    const keys = await this.keys.get(instanceId);
    const key = `${instanceId} ${issuer}`;
    let entry = this.#entries.get(key);
    if (entry && entry.keysVersion === keys.version) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      return entry;
    }
    const provider = createProvider(issuer, { ...this.deps, instanceId, keys });
    entry = { provider, handle: provider.callback(), keysVersion: keys.version };
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    while (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    return entry;
  }
}
