import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import type { NodeResponse } from "../../http/respond.js";

export function nodeHeaders(...headers: Headers[]): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = Object.create(null) as OutgoingHttpHeaders;
  for (const h of headers) h.forEach((value, key) => void (out[key] = value));
  return out;
}

/**
 * The call's signal: aborted when the caller goes away before `end` (a closed connection, an
 * HTTP/2 reset), or when its deadline passes (with connect-node's reasons). Nothing is
 * aborted after `end`, so that a call that ended costs no exception object. (`close`
 * follows every answer, and an HTTP/2 response reads as finished even after a reset.)
 */
export function callSignal(res: NodeResponse, timeoutMs: number | undefined): { signal: AbortSignal; end(): void } {
  const controller = new AbortController();
  let ended = false;
  res.once("close", () => {
    if (!ended) controller.abort(new ConnectError("the caller went away", Code.Canceled));
  });
  const timer =
    timeoutMs === undefined ? undefined : setTimeout(() => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), timeoutMs);
  return {
    signal: controller.signal,
    end: () => {
      ended = true;
      clearTimeout(timer);
    },
  };
}

/** connect-node's words for a message over readMaxBytes: a size only when the whole size is known (declared), not the bytes read when reading stopped. */
export function tooLarge(size: number | undefined, limit: number): ConnectError {
  const message = size === undefined ? "message size is larger" : `message size ${size} is larger`;
  return new ConnectError(`${message} than configured readMaxBytes ${limit}`, Code.ResourceExhausted);
}

/** Head, body and (gRPC) trailers, as connect-node's adapter writes them. */
export function writeAnswer(res: NodeResponse, status: number, header: OutgoingHttpHeaders, body: Uint8Array, trailer?: OutgoingHttpHeaders): void {
  if (res.destroyed) return;
  // Both response types write heads alike; their declared overloads just do not unify.
  (res as ServerResponse).writeHead(status, header);
  if (trailer) res.addTrailers(trailer as never);
  res.end(body);
}
