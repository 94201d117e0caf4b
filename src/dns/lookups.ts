import type { LookupAddress } from "node:dns";
import { Resolver } from "node:dns/promises";

/**
 * DNS questions the service asks itself (the TXT records of domain validation), of the
 * servers the operator names (PLATFORM_DNS_SERVERS) or else the system's, each bounded in
 * time. A resolver per question: cancelling one on its timeout must not cancel the others.
 */

/** What a TXT question found: the records (each one string, its chunks joined), none, or no answer. */
export type TxtAnswer = { records: string[] } | { missing: true } | { failed: string };

export interface DnsLookupsOptions {
  /** As node:dns setServers takes them; undefined: the system's. */
  servers: string[] | undefined;
  timeoutMs: number;
}

/** The name exists without records of the type, or does not exist: both say "nothing there". */
const MISSING = new Set(["ENODATA", "ENOTFOUND"]);

export class DnsLookups {
  constructor(private readonly options: DnsLookupsOptions) {}

  /** The operator named servers: addresses for calls made on their answers come from them too. */
  get ownServers(): boolean {
    return this.options.servers !== undefined;
  }

  async txt(name: string): Promise<TxtAnswer> {
    try {
      return { records: (await this.ask((r) => r.resolveTxt(name))).map((chunks) => chunks.join("")) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "";
      if (MISSING.has(code)) return { missing: true };
      return { failed: this.describe(error) };
    }
  }

  /** The IPv4 and IPv6 addresses of a host; an Error saying why when it has none. */
  async addresses(hostname: string): Promise<LookupAddress[]> {
    const family = async (query: (r: Resolver) => Promise<string[]>, family: 4 | 6) => {
      try {
        return (await this.ask(query)).map((address) => ({ address, family }));
      } catch (error) {
        if (MISSING.has((error as NodeJS.ErrnoException).code ?? "")) return [];
        throw new Error(`the address lookup of ${hostname} failed: ${this.describe(error)}`, { cause: error });
      }
    };
    const found = (await Promise.all([family((r) => r.resolve4(hostname), 4), family((r) => r.resolve6(hostname), 6)])).flat();
    if (found.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" });
    return found;
  }

  private async ask<T>(query: (resolver: Resolver) => Promise<T>): Promise<T> {
    const resolver = new Resolver({ timeout: this.options.timeoutMs, tries: 1 });
    if (this.options.servers) resolver.setServers(this.options.servers);
    let timer: NodeJS.Timeout | undefined;
    // c-ares' own timeout is per server and attempt: this one bounds the whole question.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        resolver.cancel();
        reject(Object.assign(new Error("timeout"), { code: "ETIMEOUT" }));
      }, this.options.timeoutMs);
    });
    try {
      return await Promise.race([query(resolver), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private describe(error: unknown): string {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ETIMEOUT" || code === "ECANCELLED") return `no answer from the DNS servers within ${this.options.timeoutMs} ms`;
    if (code === "ESERVFAIL") return "the DNS servers answered SERVFAIL";
    if (code === "EREFUSED") return "the DNS servers refused the question";
    if (code === "ECONNREFUSED") return "the DNS servers could not be reached";
    return code ?? (error as Error).message;
  }
}
