import { fromBinary, toJson, type Registry, type JsonValue, type JsonObject } from "@bufbuild/protobuf";
import { anyPack, AnySchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import type { RpcStatus } from "../http/respond.js";

/** HTTP status of each gRPC code on REST (as grpc-gateway answers). */
export const HTTP_STATUS: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

const CODE_BY_NAME = new Map<string, Code>(
  Object.entries(Code)
    .filter(([, v]) => typeof v === "number")
    .map(([k, v]) => [k.replace(/[A-Z]/g, (c, i: number) => (i ? "_" : "") + c.toLowerCase()), v as Code]),
);

/**
 * Turns a Connect error body ({"code":"not_found","message":..,"details":[{type,value}]})
 * into google.rpc.Status JSON, with each detail as an Any in its JSON form.
 */
export function rpcStatusFromConnect(body: JsonValue, registry: Registry): RpcStatus {
  const obj = (typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}) as JsonObject;
  const code = CODE_BY_NAME.get(String(obj.code)) ?? Code.Unknown;
  const details = Array.isArray(obj.details) ? obj.details.map((d) => detailToAny(d, registry)) : [];
  return { code, message: typeof obj.message === "string" ? obj.message : "", details };
}

function detailToAny(detail: JsonValue, registry: Registry): JsonValue {
  const { type, value } = (detail ?? {}) as { type?: string; value?: string };
  const schema = type ? registry.getMessage(type) : undefined;
  if (!schema || typeof value !== "string") {
    return { "@type": `type.googleapis.com/${type ?? "unknown"}`, value: value ?? "" };
  }
  const message = fromBinary(schema, Buffer.from(value, "base64"));
  return toJson(AnySchema, anyPack(schema, message), { registry });
}
