import { Code, ConnectError, type Interceptor, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";
import type { Message } from "@bufbuild/protobuf";

/**
 * connect-node hands a server-streaming call to interceptors as a stream of requests, though
 * it carries exactly one. Every rule of the chain (the tenant, `ctx`, permissions, validation)
 * is written for the one request message, so the chain's outermost interceptor reads it and
 * lets the rest see the call as unary; its innermost gives the handler back its stream. The
 * answers stay a stream throughout.
 */
export function serverStreamAsUnary(): Interceptor {
  return (next) => async (req) => {
    if (!req.stream || req.method.methodKind !== "server_streaming") return next(req);
    const message = await single(req.message);
    return next({ ...req, stream: false, message } as unknown as UnaryRequest);
  };
}

/** The innermost counterpart of serverStreamAsUnary. */
export function unaryAsServerStream(): Interceptor {
  return (next) => async (req) => {
    // serverStreamAsUnary made it look unary: its method still says what it is.
    if (req.stream || (req.method as { methodKind: string }).methodKind !== "server_streaming") return next(req);
    return next({ ...req, stream: true, message: once(req.message) } as unknown as StreamRequest);
  };
}

/** The one request message of a server-streaming call. */
export async function single(messages: AsyncIterable<Message>): Promise<Message> {
  for await (const message of messages) return message;
  throw new ConnectError("the call sent no request message", Code.InvalidArgument);
}

export async function* once(message: Message): AsyncIterable<Message> {
  yield message;
}
