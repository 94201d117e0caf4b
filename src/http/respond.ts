import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Code } from "@connectrpc/connect";

export type NodeRequest = IncomingMessage | Http2ServerRequest;
export type NodeResponse = ServerResponse | Http2ServerResponse;

/** google.rpc.Status as JSON: the body of every REST error. */
export interface RpcStatus {
  code: Code;
  message: string;
  details: unknown[];
}

/** The caller hung up before its answer was written: whatever failed then is no failure of ours. */
export function callerLeft(res: NodeResponse): boolean {
  return "stream" in res ? res.stream.destroyed : res.destroyed;
}

export function send(res: NodeResponse, status: number, contentType: string, body: Buffer | string): void {
  const payload = typeof body === "string" ? Buffer.from(body) : body;
  // Both response types write heads alike; their declared overloads just do not unify.
  (res as ServerResponse).writeHead(status, { "content-type": contentType, "content-length": payload.length });
  res.end(payload);
}

export function sendStatus(res: NodeResponse, httpStatus: number, code: Code, message: string, details: unknown[] = []): void {
  const status: RpcStatus = { code, message, details };
  send(res, httpStatus, "application/json", JSON.stringify(status));
}
