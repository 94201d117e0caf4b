import { ScalarType, type DescField, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { invalidArgument } from "../domain/errors.js";
import type { Route } from "./routes.js";

/** Message types a query parameter may fill with one string, as proto3 JSON does. */
export const STRING_MESSAGES: ReadonlySet<string> = new Set([
  "google.protobuf.Timestamp",
  "google.protobuf.Duration",
  "google.protobuf.FieldMask",
  "google.protobuf.StringValue",
  "google.protobuf.Int64Value",
  "google.protobuf.UInt64Value",
]);

/**
 * Builds the proto3 JSON of the request message from the path variables, the query
 * string and the body, as google.api.http defines it. The Connect handler then parses
 * that JSON exactly as it parses a Connect request, unknown fields and all.
 */
export function transcodeRequest(route: Route, params: Map<string, string>, query: URLSearchParams, body: JsonValue | undefined): JsonObject {
  const input = route.method.input;
  let request: JsonObject = {};
  if (route.body === "*" && body !== undefined) {
    if (!isObject(body)) throw invalidArgument("the request body must be a JSON object");
    request = body;
  } else if (route.body !== "" && route.body !== "*" && body !== undefined) {
    const field = input.fields.find((f) => f.name === route.body)!;
    if (isObject(body) && field.fieldKind === "message") refuseQueryFields(input, field.message, Object.keys(body));
    request[field.jsonName] = body;
  } else if (route.body === "" && body !== undefined && !(isObject(body) && Object.keys(body).length === 0)) {
    // A field sent in a body this endpoint does not read would be dropped without a word.
    const named = isObject(body) ? Object.keys(body).filter((k) => findField(input, k)) : [];
    const hint =
      named.length > 0 ? `: give ${named.join(", ")} as query parameters (?${named.map((k) => `${findField(input, k)!.jsonName}=…`).join("&")})` : "";
    throw invalidArgument(`this endpoint takes no request body${hint}`);
  }
  for (const [path, value] of params) setPath(request, input, path.split("."), value, "path");
  if (route.body !== "*") {
    for (const [name, value] of query) {
      const fieldPath = name.split(".");
      const top = findField(input, fieldPath[0]!);
      if (top && route.body !== "" && top.name === route.body) {
        throw invalidArgument(`query parameter ${name} belongs to the request body`);
      }
      if (top && route.template.variables.some((v) => v.split(".")[0] === top.name)) {
        throw invalidArgument(`query parameter ${name} is already given by the path`);
      }
      setPath(request, input, fieldPath, value, "query");
    }
  } else if ([...query.keys()].length > 0) {
    throw invalidArgument("this endpoint takes its whole request in the body; query parameters are not allowed");
  }
  return request;
}

/**
 * Fields of the request in a body that holds only one of its fields (`body: "user"`): the
 * body's message has no such field, so the parser would say "unknown key"; this says where
 * they go instead.
 */
function refuseQueryFields(input: DescMessage, bodyMessage: DescMessage, keys: string[]): void {
  const misplaced = keys.filter((k) => !findField(bodyMessage, k) && findField(input, k));
  if (misplaced.length === 0) return;
  const names = misplaced.map((k) => findField(input, k)!.jsonName);
  throw invalidArgument(
    `${names.join(", ")} ${names.length === 1 ? "is a query parameter" : "are query parameters"} of this endpoint, not a field of its body (?${names.map((n) => `${n}=…`).join("&")})`,
  );
}

function setPath(target: JsonObject, message: DescMessage, path: string[], raw: string, from: "path" | "query") {
  const [name, ...rest] = path;
  const field = findField(message, name!);
  if (!field) throw invalidArgument(`unknown ${from} parameter ${path.join(".")} for ${message.typeName}`);
  if (rest.length > 0) {
    if (field.fieldKind !== "message" || STRING_MESSAGES.has(field.message.typeName)) {
      throw invalidArgument(`${field.name} has no field ${rest.join(".")}`);
    }
    const child = target[field.jsonName];
    const nested: JsonObject = isObject(child) ? child : {};
    target[field.jsonName] = nested;
    setPath(nested, field.message, rest, raw, from);
    return;
  }
  const value = scalarFromString(field, raw);
  if (field.fieldKind === "list") {
    const list = target[field.jsonName];
    target[field.jsonName] = Array.isArray(list) ? [...list, value] : [value];
  } else {
    target[field.jsonName] = value;
  }
}

function findField(message: DescMessage, name: string): DescField | undefined {
  return message.fields.find((f) => f.name === name || f.jsonName === name);
}

function scalarFromString(field: DescField, raw: string): JsonValue {
  const kind = field.fieldKind === "list" ? field.listKind : field.fieldKind;
  if (kind === "enum") return /^-?\d+$/.test(raw) ? Number(raw) : raw;
  if (kind === "message") {
    if (field.message && STRING_MESSAGES.has(field.message.typeName)) return raw;
    throw invalidArgument(`${field.name} is a message: set its fields as ${field.name}.<field>`);
  }
  if (kind !== "scalar") throw invalidArgument(`${field.name} cannot be set from a query parameter`);
  switch (field.scalar) {
    case ScalarType.BOOL:
      if (raw === "true" || raw === "1") return true;
      if (raw === "false" || raw === "0") return false;
      throw invalidArgument(`${field.name} must be true or false, not "${raw}"`);
    case ScalarType.STRING:
    case ScalarType.BYTES:
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return raw;
    default: {
      const n = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(n)) throw invalidArgument(`${field.name} must be a number, not "${raw}"`);
      return n;
    }
  }
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
