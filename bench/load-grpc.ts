import { toBinary, type DescMethodUnary, type MessageInitShape, create } from "@bufbuild/protobuf";
import type { Http2Request } from "./load-http2.js";

/**
 * A gRPC unary call as a raw HTTP/2 request: length-prefixed protobuf, gRPC headers. The
 * message is encoded per call, as a client would, but without a client library's own work,
 * so that the gRPC row and the HTTP/2 baseline row pay the same load-generator cost.
 */
export function grpcRequest<M extends DescMethodUnary>(method: M, message: MessageInitShape<M["input"]>, authorization: string): ReturnType<Http2Request> {
  const payload = toBinary(method.input, create(method.input, message));
  const frame = new Uint8Array(5 + payload.length);
  new DataView(frame.buffer).setUint32(1, payload.length);
  frame.set(payload, 5);
  return {
    method: "POST",
    path: `/${method.parent.typeName}/${method.name}`,
    headers: { "content-type": "application/grpc", te: "trailers", authorization },
    body: frame,
  };
}
