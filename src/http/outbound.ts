import { type LookupAddress, type LookupOptions } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { BlockList, isIP, type LookupFunction } from "node:net";

/**
 * The one client the service calls other servers with (action targets, upstream identity
 * providers): bounded in time and size, never following redirects, and by default never
 * reaching loopback, private, link-local, shared or metadata addresses — checked on the
 * address the name resolves to when the connection is made, so that a DNS answer cannot
 * smuggle an internal address past a check of the URL.
 */

/** Why a call did not produce an answer to use. */
export type OutboundFailure = "refused" | "timeout" | "too_large" | "network" | "invalid_url";

export class OutboundError extends Error {
  constructor(
    readonly failure: OutboundFailure,
    message: string,
    /** The system's error code of a network failure (ECONNREFUSED, ENOTFOUND, …), when there is one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = "OutboundError";
  }
}

export interface OutboundOptions {
  /** Allow internal addresses (tests, on-premises installations). */
  allowPrivate: boolean;
  /** Answers with a longer body are an error. */
  maxResponseBytes: number;
}

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Bounds the whole call: connecting, sending, waiting and reading. */
  timeoutMs: number;
  /**
   * Finds the host's addresses instead of the system's resolver (domain validation asks the
   * operator's DNS servers); the private-address policy applies to what it finds all the same.
   */
  resolve?: AddressResolver;
}

type AddressResolver = (hostname: string) => Promise<LookupAddress[]>;

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Addresses no call may reach unless allowPrivate is set. */
const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this" network
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // shared address space (carrier NAT; some clouds' metadata services)
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, with the cloud metadata address 169.254.169.254
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  INTERNAL.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7], // unique local, with AWS's fd00:ec2::254
  ["fe80::", 10],
  ["ff00::", 8],
  ["64:ff9b::", 96], // NAT64 of any IPv4 address, internal ones included
] as const) {
  INTERNAL.addSubnet(net, prefix, "ipv6");
}

export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return INTERNAL.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** A connection's lookup through a resolver, refusing an internal address whatever the name unless allowed. */
function lookupThrough(resolve: (hostname: string, options: LookupOptions) => Promise<LookupAddress[]>, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options).then(
      (addresses) => {
        const internal = allowPrivate ? undefined : addresses.find((a) => isInternalAddress(a.address));
        if (internal) return callback(new OutboundError("refused", `${hostname} resolves to the internal address ${internal.address}`), "", 0);
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        return callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
}

/** dns.lookup, refusing to connect to an internal address whatever the name. */
const guardedLookup = lookupThrough((hostname, options) => dnsLookup(hostname, { ...options, all: true }), false);

export class OutboundClient {
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly options: OutboundOptions) {
    // Kept-alive connections are reused across calls; each new one is checked as it opens.
    const lookup = options.allowPrivate ? undefined : guardedLookup;
    this.agents = { http: new http.Agent({ keepAlive: true, lookup }), https: new https.Agent({ keepAlive: true, lookup }) };
  }

  /** Whether internal addresses may be reached: what other clients (LDAP) follow too. */
  get allowPrivate(): boolean {
    return this.options.allowPrivate;
  }

  async request(target: string, request: OutboundRequest): Promise<OutboundResponse> {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new OutboundError("invalid_url", `"${target}" is not an absolute URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new OutboundError("invalid_url", `only http and https URLs can be called, not ${url.protocol}`);
    // An address literal never goes through the lookup: checked here.
    const literal = url.hostname.replace(/^\[|\]$/g, "");
    if (!this.options.allowPrivate && isInternalAddress(literal)) throw new OutboundError("refused", `${literal} is an internal address`);
    const signal = AbortSignal.timeout(request.timeoutMs);
    return new Promise<OutboundResponse>((resolve, reject) => {
      const fail = (error: unknown) => reject(asOutboundError(error, signal, request.timeoutMs));
      // Addresses of a resolver of the caller's: a connection of its own, not a pooled one.
      const connection = request.resolve
        ? { agent: false as const, lookup: lookupThrough(request.resolve, this.options.allowPrivate) }
        : { agent: url.protocol === "https:" ? this.agents.https : this.agents.http };
      const req = (url.protocol === "https:" ? https : http).request(
        url,
        { method: request.method ?? "GET", headers: request.headers, ...connection, signal },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > this.options.maxResponseBytes) {
              res.destroy(new OutboundError("too_large", `the answer is longer than ${this.options.maxResponseBytes} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on("error", fail);
        },
      );
      req.on("error", fail);
      req.end(request.body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

function asOutboundError(error: unknown, signal: AbortSignal, timeoutMs: number): OutboundError {
  if (error instanceof OutboundError) return error;
  if (signal.aborted) return new OutboundError("timeout", `no complete answer within ${timeoutMs} ms`);
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof OutboundError) return cause;
  const code = (error as { code?: unknown }).code;
  return new OutboundError("network", (error as Error).message ?? String(error), typeof code === "string" ? code : undefined);
}
