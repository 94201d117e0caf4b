import { Code, ConnectError, createContextKey, createContextValues, type ContextValues } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { HTTP_STATUS } from "../gateway/rpc-status.js";

/**
 * What logs, metrics and traces say about a call: how it came in and how it ended. Shared
 * so that the three never disagree about a protocol or a code.
 */
export type Protocol = "grpc" | "grpc-web" | "connect" | "rest";

/** A call's outcome: a Connect code, or 0 for success (Connect has no code for ok). */
export type Outcome = Code | 0;

/**
 * Set on the calls of the REST gateway: the HTTP status of a successful answer (200, or 201
 * when the response says it created something), from the response message.
 */
const restSuccessKey = createContextKey<((message: unknown) => number) | undefined>(undefined, { description: "the call came through the REST gateway" });

/** The id of the trace the call's span belongs to, for log lines; set only while tracing. */
export const traceIdKey = createContextKey<string | undefined>(undefined, { description: "trace id" });

interface CallInfo {
  header: Headers;
  contextValues: ContextValues;
}

/**
 * The REST gateway hands its calls to the Connect handlers as Connect JSON, so only a mark
 * it cannot forge tells them apart: a context value, which no client can send.
 */
export function protocolOf(req: CallInfo): Protocol {
  if (req.contextValues.get(restSuccessKey)) return "rest";
  const type = req.header.get("content-type")?.toLowerCase() ?? "";
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  // application/json, application/proto, application/connect+*, and Connect GET (no body).
  return "connect";
}

/** The context of a call the REST gateway makes: marked as REST, with how its success is answered. */
export function restCallContext(successStatus: (message: unknown) => number): ContextValues {
  return createContextValues().set(restSuccessKey, successStatus);
}

/**
 * The call's signal fires at its deadline or when the caller goes away (an HTTP/2 reset, a
 * closed connection). Whatever the handler then threw or returned, that is how it ended.
 */
export function abortedCode(signal: AbortSignal): Code.Canceled | Code.DeadlineExceeded | undefined {
  if (!signal.aborted) return undefined;
  const reason: unknown = signal.reason;
  return reason instanceof ConnectError && reason.code === Code.DeadlineExceeded ? Code.DeadlineExceeded : Code.Canceled;
}

export function outcomeOf(signal: AbortSignal, thrown?: unknown): Outcome {
  return abortedCode(signal) ?? (thrown === undefined ? 0 : ConnectError.from(thrown).code);
}

/** `ok`, `not_found`, …: the Connect protocol's names, as logs and metric labels use them. */
export function codeName(outcome: Outcome): string {
  return outcome === 0 ? "ok" : codeToString(outcome);
}

/**
 * The HTTP status the answer goes out with. gRPC and gRPC-web always answer 200 and carry
 * the code in grpc-status, and so do Connect's streams (in their end message); Connect's unary
 * errors and REST's use the same mapping (HTTP_STATUS). `message` is a successful unary answer.
 */
export function wireStatus(req: CallInfo & { method: { methodKind: string } }, outcome: Outcome, message?: unknown): number {
  const protocol = protocolOf(req);
  if (protocol === "grpc" || protocol === "grpc-web" || (protocol === "connect" && req.method.methodKind !== "unary")) return 200;
  if (outcome !== 0) return HTTP_STATUS[outcome];
  return protocol === "rest" ? req.contextValues.get(restSuccessKey)!(message) : 200;
}

/** What a stream whose reader stopped before its end counts as. */
export const STOPPED_READING = new ConnectError("the caller stopped reading the stream", Code.Canceled);

/**
 * A streaming response's outcome is known only when its last message is sent, or when the
 * caller stops reading (then `thrown` is STOPPED_READING): `onEnd` hears of it then, once.
 */
export async function* watchStream<T>(messages: AsyncIterable<T>, onEnd: (thrown: unknown) => void): AsyncIterable<T> {
  let thrown: unknown = STOPPED_READING;
  try {
    yield* messages;
    thrown = undefined;
  } catch (error) {
    thrown = error ?? new Error("stream failed");
    throw error;
  } finally {
    onEnd(thrown);
  }
}
