import type { IncomingHttpHeaders } from "node:http";
import { OutboundError, type OutboundClient } from "../http/outbound.js";

/**
 * The calls of external login to a provider: through the outbound client, bounded in time and
 * size and, unless allowed, never to internal addresses; answers must be JSON with status 200.
 */

/** Why an upstream step failed: `refused` is the outbound client's address rule, the others the provider's answers. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: "refused" | "unreachable" | "invalid",
    message: string,
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

export interface Fetching {
  outbound: OutboundClient;
  timeoutMs: number;
}

export interface FetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

// GitHub's API refuses requests without a User-Agent.
const HEADERS = { accept: "application/json", "user-agent": "platform-identity" };

interface Answer<T> {
  body: T;
  headers: IncomingHttpHeaders;
  /** Length of the body in bytes. */
  bytes: number;
}

/** One call whose answer must be JSON with status 200: its value and the answer's headers. */
export async function fetchJson(calls: Fetching, url: string, init: FetchInit): Promise<Answer<unknown>> {
  let res;
  try {
    res = await calls.outbound.request(url, {
      method: init.method ?? "GET",
      headers: { ...HEADERS, ...init.headers },
      ...(init.body !== undefined && { body: init.body }),
      timeoutMs: calls.timeoutMs,
    });
  } catch (error) {
    if (error instanceof OutboundError)
      throw new UpstreamError(error.failure === "refused" || error.failure === "invalid_url" ? "refused" : "unreachable", `${url}: ${error.message}`);
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(res.body.toString("utf8"));
  } catch {
    body = undefined;
  }
  if (res.status !== 200) {
    const error = body && typeof body === "object" && typeof (body as { error?: unknown }).error === "string" ? `: ${(body as { error: string }).error}` : "";
    throw new UpstreamError("invalid", `${url} answered ${res.status}${error}`);
  }
  if (body === undefined) throw new UpstreamError("invalid", `${url} answered no JSON`);
  return { body, headers: res.headers, bytes: res.body.length };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** One call whose answer must be a JSON object with status 200: the object and the answer's headers. */
export async function fetchObject(calls: Fetching, url: string, init: FetchInit = {}): Promise<Answer<Record<string, unknown>>> {
  const answer = await fetchJson(calls, url, init);
  if (!isObject(answer.body)) throw new UpstreamError("invalid", `${url} answered no JSON object`);
  return { ...answer, body: answer.body };
}

export async function getJson(calls: Fetching, url: string, init: FetchInit = {}): Promise<Record<string, unknown>> {
  return (await fetchObject(calls, url, init)).body;
}
