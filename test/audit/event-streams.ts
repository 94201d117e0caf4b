import { fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { ConnectError, createClient } from "@connectrpc/connect";
import { PlatformEvents, WatchEventsRequestSchema } from "../../gen/platform/resources/event/v3alpha/event_service_pb.js";
import { transportFor } from "../support/clients.js";

export type StreamProtocol = "grpc" | "grpc-web" | "connect" | "rest";
export const STREAM_PROTOCOLS: StreamProtocol[] = ["grpc", "grpc-web", "connect", "rest"];

/** An open WatchEvents stream: its answers as JSON, read one at a time. */
export interface EventStream {
  next(timeoutMs?: number): Promise<JsonObject>;
  /** The next answer with an event, past heartbeats. */
  nextEvent(timeoutMs?: number): Promise<JsonObject>;
  close(): void;
}

export class StreamError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}

/** Opens WatchEvents over one protocol; the first answer (or the refusal) has arrived when it resolves. */
export async function watchEvents(
  protocol: StreamProtocol,
  baseUrl: string,
  token: string,
  request: JsonObject,
  headers: Record<string, string> = {},
): Promise<EventStream & { first: JsonObject }> {
  const abort = new AbortController();
  const answers =
    protocol === "rest" ? restAnswers(baseUrl, token, request, headers, abort.signal) : rpcAnswers(protocol, baseUrl, token, request, headers, abort.signal);
  // A read that timed out is still pending: the next read takes its answer rather than lose it.
  let pending: Promise<IteratorResult<JsonObject>> | undefined;
  const next = async (timeoutMs = 10_000): Promise<JsonObject> => {
    let timer: NodeJS.Timeout | undefined;
    pending ??= answers.next();
    try {
      const result = await Promise.race([
        pending,
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs))),
      ]);
      pending = undefined;
      if (result.done) throw new Error("the stream ended");
      return result.value;
    } finally {
      clearTimeout(timer);
    }
  };
  const nextEvent = async (timeoutMs = 10_000): Promise<JsonObject> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = await next(Math.max(1, deadline - Date.now()));
      if (answer.event) return answer;
    }
  };
  const first = await next();
  return { first, next, nextEvent, close: () => abort.abort() };
}

async function* rpcAnswers(
  protocol: Exclude<StreamProtocol, "rest">,
  baseUrl: string,
  token: string,
  request: JsonObject,
  headers: Record<string, string>,
  signal: AbortSignal,
): AsyncGenerator<JsonObject> {
  const client = createClient(PlatformEvents, transportFor(protocol, baseUrl));
  try {
    for await (const answer of client.watchEvents(fromJson(WatchEventsRequestSchema, request), {
      headers: { authorization: `Bearer ${token}`, ...headers },
      signal,
    })) {
      yield toJson(PlatformEvents.method.watchEvents.output, answer) as JsonObject;
    }
  } catch (error) {
    if (signal.aborted) return;
    const e = ConnectError.from(error);
    throw new StreamError(String(e.code), e.rawMessage);
  }
}

/** NDJSON over REST: each line `{"result": …}`, an error after the first answer `{"error": …}`. */
async function* restAnswers(
  baseUrl: string,
  token: string,
  request: JsonObject,
  headers: Record<string, string>,
  signal: AbortSignal,
): AsyncGenerator<JsonObject> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/resources/v3alpha/events/_watch`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(request),
      signal,
    });
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
  if (!res.ok) {
    const status = (await res.json()) as { code: number; message: string };
    throw new StreamError(String(status.code), status.message, res.status);
  }
  if (res.headers.get("content-type") !== "application/x-ndjson") throw new Error(`unexpected content type ${res.headers.get("content-type")}`);
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      for (let newline = buffered.indexOf("\n"); newline >= 0; newline = buffered.indexOf("\n")) {
        const line = JSON.parse(buffered.slice(0, newline)) as { result?: JsonObject; error?: { code: number; message: string } };
        buffered = buffered.slice(newline + 1);
        if (line.error) throw new StreamError(String(line.error.code), line.error.message);
        yield line.result!;
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
}
