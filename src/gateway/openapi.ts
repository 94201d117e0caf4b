import { ScalarType, type DescEnum, type DescField, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import { methodRules } from "../rpc/method-rules.js";
import type { Route } from "./routes.js";
import { STRING_MESSAGES } from "./transcode-request.js";

type Schema = Record<string, unknown>;

const STATUS = "google.rpc.Status";
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** An Any in proto3 JSON: the type URL plus the packed message's fields (or `value` for WKTs). */
const ANY: Schema = {
  type: "object",
  properties: { "@type": { type: "string", description: "type.googleapis.com/<full message name>" } },
  required: ["@type"],
  additionalProperties: true,
};

const INT64 = { type: "string", format: "int64" };
const UINT64 = { type: "string", format: "uint64" };
/** proto3 JSON forms of scalars: 64-bit integers travel as strings so that JavaScript keeps every digit. */
const SCALARS: Record<ScalarType, Schema> = {
  [ScalarType.DOUBLE]: { type: "number", format: "double" },
  [ScalarType.FLOAT]: { type: "number", format: "float" },
  [ScalarType.INT64]: INT64,
  [ScalarType.SINT64]: INT64,
  [ScalarType.SFIXED64]: INT64,
  [ScalarType.UINT64]: UINT64,
  [ScalarType.FIXED64]: UINT64,
  [ScalarType.INT32]: { type: "integer", format: "int32" },
  [ScalarType.SINT32]: { type: "integer", format: "int32" },
  [ScalarType.SFIXED32]: { type: "integer", format: "int32" },
  [ScalarType.UINT32]: { type: "integer", format: "uint32", minimum: 0 },
  [ScalarType.FIXED32]: { type: "integer", format: "uint32", minimum: 0 },
  [ScalarType.BOOL]: { type: "boolean" },
  [ScalarType.STRING]: { type: "string" },
  [ScalarType.BYTES]: { type: "string", format: "byte" },
};

/** Well-known types have a special proto3 JSON form, so they are inlined rather than described field by field. */
const WELL_KNOWN: Record<string, Schema> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?\\d+(\\.\\d{1,9})?s$", examples: ["10s"] },
  "google.protobuf.FieldMask": { type: "string", description: "Comma-separated lowerCamel field paths" },
  "google.protobuf.Struct": { type: "object", additionalProperties: true },
  "google.protobuf.Value": {},
  "google.protobuf.ListValue": { type: "array", items: {} },
  "google.protobuf.Empty": { type: "object" },
  "google.protobuf.Any": ANY,
  "google.protobuf.DoubleValue": SCALARS[ScalarType.DOUBLE],
  "google.protobuf.FloatValue": SCALARS[ScalarType.FLOAT],
  "google.protobuf.Int64Value": INT64,
  "google.protobuf.UInt64Value": UINT64,
  "google.protobuf.Int32Value": SCALARS[ScalarType.INT32],
  "google.protobuf.UInt32Value": SCALARS[ScalarType.UINT32],
  "google.protobuf.BoolValue": SCALARS[ScalarType.BOOL],
  "google.protobuf.StringValue": SCALARS[ScalarType.STRING],
  "google.protobuf.BytesValue": SCALARS[ScalarType.BYTES],
};


/** OpenAPI 3.1 description of the REST gateway, derived from the same descriptors that drive it. */
export function openApiDocument(
  routes: readonly Route[],
  info: { title: string; version: string; serverUrl?: string },
): Record<string, unknown> {
  const schemas = new Map<string, Schema>();

  const enumSchema = (e: DescEnum): Schema =>
    e.typeName === "google.protobuf.NullValue" ? { type: "null" } : { type: "string", enum: e.values.map((v) => v.name) };

  const messageSchema = (message: DescMessage): Schema => {
    const wellKnown = WELL_KNOWN[message.typeName];
    if (wellKnown) return { ...wellKnown };
    if (!schemas.has(message.typeName)) {
      const properties: Record<string, Schema> = {};
      // Registered before the fields are walked, so a recursive message ends in a $ref to itself.
      schemas.set(message.typeName, { type: "object", properties });
      for (const field of message.fields) properties[field.jsonName] = fieldSchema(field);
    }
    return ref(message.typeName);
  };

  /** The schema of one value: the element of a list, the value of a map, or the field itself. */
  const valueSchema = (field: DescField): Schema =>
    field.scalar !== undefined ? { ...SCALARS[field.scalar] } : field.enum ? enumSchema(field.enum) : messageSchema(field.message!);

  const fieldSchema = (field: DescField): Schema => {
    const value = valueSchema(field);
    const schema: Schema =
      field.fieldKind === "list"
        ? { type: "array", items: value }
        : field.fieldKind === "map"
          ? { type: "object", additionalProperties: value } // proto3 JSON writes every map key as a string
          : value;
    // OpenAPI cannot express "at most one of" without oneOf over whole objects, which generators handle badly.
    if (field.oneof) schema.description = `Member of oneof \`${field.oneof.name}\`; set at most one of its fields.`;
    if (field.deprecated) schema.deprecated = true;
    return schema;
  };

  /** Leaves the gateway fills from the query string, named by their dotted JSON path. */
  const queryParameters = (route: Route): Schema[] => {
    if (route.body === "*") return [];
    const params: Schema[] = [];
    const walk = (message: DescMessage, prefix: string, protoPrefix: string, seen: readonly string[]) => {
      for (const field of message.fields) {
        const protoPath = protoPrefix + field.name;
        if ((protoPrefix === "" && field.name === route.body) || route.template.variables.includes(protoPath)) continue;
        const name = prefix + field.jsonName;
        const isLeafMessage = field.message !== undefined && STRING_MESSAGES.has(field.message.typeName);
        if (field.fieldKind === "message" && !isLeafMessage) {
          if (!seen.includes(field.message.typeName) && !WELL_KNOWN[field.message.typeName]) {
            walk(field.message, `${name}.`, `${protoPath}.`, [...seen, field.message.typeName]);
          }
        } else if (field.fieldKind !== "map" && (field.fieldKind !== "list" || field.listKind !== "message" || isLeafMessage)) {
          params.push({ name, in: "query", required: false, schema: fieldSchema(field) });
        }
      }
    };
    walk(route.method.input, "", "", [route.method.input.typeName]);
    return params;
  };

  const requestBody = (route: Route): Schema | undefined => {
    if (route.body === "") return undefined;
    const field = route.method.input.fields.find((f) => f.name === route.body);
    const schema = field ? fieldSchema(field) : messageSchema(route.method.input);
    delete schema.description; // a oneof note means nothing once the field is the whole body
    return { required: false, content: { "application/json": { schema } } };
  };

  const responses = (route: Route): Schema => {
    const ok = { content: { "application/json": { schema: messageSchema(route.method.output) } } };
    // With a created field, one RPC answers 200 when it updated and 201 when it created.
    const success: Schema = route.createdJsonField
      ? { "200": { description: "Updated", ...ok }, "201": { description: "Created", ...ok } }
      : { [String(route.successStatus)]: { description: route.successStatus === 201 ? "Created" : "OK", ...ok } };
    return { ...success, default: { description: "Error", content: { "application/json": { schema: ref(STATUS) } } } };
  };

  const paths: Record<string, Record<string, Schema>> = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    const { method } = route;
    const service = method.parent.name;
    const path = route.template.source.replace(/\{([^}=]+)(=[^}]*)?\}/g, "{$1}");
    // Additional bindings share a method, yet every operationId must be unique.
    let operationId = `${service}_${method.name}`;
    for (let n = 2; operationIds.has(operationId); n++) operationId = `${service}_${method.name}_${n}`;
    operationIds.add(operationId);
    const rules = methodRules(method);
    const summary = leadingComment(method);
    const pathParams = route.template.variables.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } }));
    const parameters = [...pathParams, ...queryParameters(route)];
    const body = requestBody(route);
    const operation: Schema = {
      operationId,
      tags: [service],
      ...(summary && { summary }),
      ...(method.deprecated && { deprecated: true }),
      ...(parameters.length > 0 && { parameters }),
      ...(body && { requestBody: body }),
      responses: responses(route),
      ...(rules && { "x-permission": rules.permission, "x-feature-flags": rules.features }),
    };
    (paths[path] ??= {})[route.httpMethod.toLowerCase()] = operation;
  }

  schemas.set(STATUS, {
    type: "object",
    properties: {
      code: { type: "integer", format: "int32", description: "google.rpc.Code" },
      message: { type: "string" },
      details: { type: "array", items: ANY },
    },
  });
  const tags = [...new Set(routes.map((r) => r.method.parent.name))].sort().map((name) => ({ name }));
  return {
    openapi: "3.1.0",
    info: { title: info.title, version: info.version },
    ...(info.serverUrl && { servers: [{ url: info.serverUrl }] }),
    tags,
    paths: sortKeys(paths),
    components: { schemas: sortKeys(Object.fromEntries(schemas)) },
  };
}

/**
 * Generated code embeds descriptors without source info, so this finds nothing there; it
 * works for descriptors loaded from a FileDescriptorSet built with --include_source_info.
 */
function leadingComment(method: DescMethod): string | undefined {
  const service = method.parent;
  const path = [6, service.file.services.indexOf(service), 2, service.methods.indexOf(method)];
  const location = service.file.proto.sourceCodeInfo?.location.find(
    (l) => l.path.length === path.length && l.path.every((p, i) => p === path[i]),
  );
  return location?.leadingComments.trim().replace(/\s+/g, " ") || undefined;
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
