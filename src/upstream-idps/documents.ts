import type { IncomingHttpHeaders } from "node:http";
import { TtlCache } from "../cache/ttl-cache.js";
import { fetchObject, type Fetching } from "./fetch.js";

/**
 * The documents every login with a provider reads — its discovery document and its JWKS —
 * kept per process as long as the provider's Cache-Control allows, within bounds of age and
 * number (docs/oidc.md, "Outbound rules"). Logins that miss the same document at once share
 * one fetch.
 */

export interface DocumentLimits {
  /** No document is kept longer, whatever its max-age; 0: none is kept. */
  maxAgeMs: number;
  /** How long one without max-age (and without no-store or no-cache) is kept, within maxAgeMs. */
  defaultAgeMs: number;
  /** Documents kept, the oldest going first. */
  maxEntries: number;
  /** Longer documents are used but not kept: with maxEntries, this bounds the memory kept. */
  maxDocumentBytes: number;
  /** A document is refetched ahead of its expiry (refetch()) at most once per this. */
  refetchIntervalMs: number;
}

type Document = Record<string, unknown>;

/** Throws when a fetched document cannot be used: nothing unusable is kept. */
export type DocumentCheck = (url: string, doc: Document) => void;

/**
 * How long an answer may be kept by its Cache-Control (RFC 9111 5.2.2): not at all with
 * no-store or no-cache, max-age less the Age it has already spent in caches on the way, else
 * the default; never longer than the maximum.
 */
export function freshnessMs(headers: IncomingHttpHeaders, limits: Pick<DocumentLimits, "maxAgeMs" | "defaultAgeMs">): number {
  const directives = String(headers["cache-control"] ?? "")
    .toLowerCase()
    .split(",")
    .map((d) => d.trim());
  if (directives.some((d) => d === "no-store" || d === "no-cache" || d.startsWith("no-cache="))) return 0;
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)?.[1]).find((v) => v !== undefined);
  const age = Number(headers.age);
  const ms = maxAge === undefined ? limits.defaultAgeMs : (Number(maxAge) - (Number.isFinite(age) && age > 0 ? age : 0)) * 1000;
  return Math.max(0, Math.min(ms, limits.maxAgeMs));
}

export class UpstreamDocuments {
  private readonly kept: TtlCache<string, Document>;
  private readonly inFlight = new Map<string, Promise<Document>>();
  /** Documents refetched lately: a flood of unknown keys costs the provider one call per interval. */
  private readonly refetched: TtlCache<string, true>;

  constructor(
    private readonly calls: Fetching,
    private readonly limits: DocumentLimits,
  ) {
    this.kept = new TtlCache(limits.maxAgeMs, limits.maxEntries);
    this.refetched = new TtlCache(limits.refetchIntervalMs, limits.maxEntries);
  }

  /**
   * The document at `url`, kept or fetched; `fetched` says it was asked for just now. A kept
   * one is checked again: a provider may name as its JWKS another one's discovery document.
   */
  async get(url: string, check: DocumentCheck): Promise<{ doc: Document; fetched: boolean }> {
    const kept = this.kept.get(url);
    if (!kept) return { doc: await this.fetch(url, check), fetched: true };
    check(url, kept);
    return { doc: kept, fetched: false };
  }

  /**
   * The document fetched again before it expires (the JWKS after a token signed by a key it
   * lacks); undefined when it was refetched less than the interval ago.
   */
  async refetch(url: string, check: DocumentCheck): Promise<Document | undefined> {
    if (this.refetched.get(url)) return undefined;
    this.refetched.set(url, true);
    return this.fetch(url, check);
  }

  private fetch(url: string, check: DocumentCheck): Promise<Document> {
    const pending = this.inFlight.get(url);
    if (pending) return pending;
    const fetching = (async () => {
      const { body, headers, bytes } = await fetchObject(this.calls, url);
      check(url, body);
      this.kept.set(url, body, bytes <= this.limits.maxDocumentBytes ? freshnessMs(headers, this.limits) : 0);
      return body;
    })().finally(() => this.inFlight.delete(url));
    this.inFlight.set(url, fetching);
    return fetching;
  }
}
