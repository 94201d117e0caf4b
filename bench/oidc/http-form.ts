import { requestJson, type JsonResponse } from "../http-json.js";
import type { Http1Request } from "../load-http1.js";

export type Answer = JsonResponse;

/** One HTTP/1.1 call of an `Http1Request` (any body, e.g. a form), for smoke checks; not for load. */
export function send(port: number, request: ReturnType<Http1Request>): Promise<Answer> {
  return requestJson(port, request.method, request.path, { headers: request.headers ?? {}, ...(request.body !== undefined && { rawBody: request.body }) });
}

export const FORM = "application/x-www-form-urlencoded";

export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** RFC 6749 section 2.3.1: both parts form-urlencoded, then base64. */
export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
