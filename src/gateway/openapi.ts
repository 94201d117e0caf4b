import { ScalarType, type DescEnum, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { PROTO_COMMENTS } from "../../gen/platform/comments.js";
import { AUTHENTICATED, methodRules, PUBLIC, type MethodRules } from "../rpc/method-rules.js";
import type { Route } from "./routes.js";
import { STRING_MESSAGES } from "./transcode-request.js";

type Schema = Record<string, unknown>;

const STATUS = "google.rpc.Status";
const BEARER = "bearer";
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
export function openApiDocument(routes: readonly Route[], info: { title: string; version: string; serverUrl?: string }): Record<string, unknown> {
  const schemas = new Map<string, Schema>();

  const enumSchema = (e: DescEnum): Schema =>
    e.typeName === "google.protobuf.NullValue" ? { type: "null" } : { type: "string", enum: e.values.map((v) => v.name) };

  const messageSchema = (message: DescMessage): Schema => {
    const wellKnown = WELL_KNOWN[message.typeName];
    if (wellKnown) return { ...wellKnown };
    if (!schemas.has(message.typeName)) {
      const properties: Record<string, Schema> = {};
      // Registered before the fields are walked, so a recursive message ends in a $ref to itself.
      schemas.set(message.typeName, { type: "object", ...described(PROTO_COMMENTS[message.typeName]), properties });
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
    const oneof = field.oneof && `Member of oneof \`${field.oneof.name}\`; set at most one of its fields.`;
    // Beside a $ref, 3.1 allows a description: the field's own words, then the type's.
    Object.assign(schema, described(fieldComment(field), schema.description as string | undefined, oneof));
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
          params.push({ name, in: "query", required: false, ...described(fieldComment(field)), schema: fieldSchema(field) });
        }
      }
    };
    walk(route.method.input, "", "", [route.method.input.typeName]);
    return params;
  };

  const requestBody = (route: Route): Schema | undefined => {
    if (route.body === "") return undefined;
    const field = route.method.input.fields.find((f) => f.name === route.body);
    if (route.rawBody) {
      const description = [field ? fieldComment(field) : undefined, "The raw body, with its Content-Type."].filter(Boolean).join(" ");
      return { required: true, description, content: { "*/*": { schema: { type: "string", format: "binary" } } } };
    }
    const schema = field ? fieldSchema(field) : messageSchema(route.method.input);
    // Said once, on the body; a oneof note means nothing once the field is the whole body.
    delete schema.description;
    const description = field ? fieldComment(field) : PROTO_COMMENTS[route.method.input.typeName];
    return { required: false, ...described(description), content: { "application/json": { schema } } };
  };

  const responses = (route: Route): Schema => {
    const ok =
      route.rawResponse !== undefined
        ? { content: { "*/*": { schema: { type: "string", format: "binary" } } } }
        : route.method.methodKind === "server_streaming"
          ? // Newline-delimited JSON, one object a line (gateway.ts serveStream).
            {
              content: {
                "application/x-ndjson": { schema: { type: "object", properties: { result: messageSchema(route.method.output), error: ref(STATUS) } } },
              },
            }
          : { content: { "application/json": { schema: messageSchema(route.method.output) } } };
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
    const comment = PROTO_COMMENTS[`${method.parent.typeName}.${method.name}`];
    const description = [comment, rulesNote(rules)].filter(Boolean).join("\n\n");
    const pathParams = route.template.variables.map((name) => ({
      name,
      in: "path",
      required: true,
      ...described(pathComment(method.input, name)),
      schema: { type: "string" },
    }));
    const parameters = [...pathParams, ...queryParameters(route)];
    const body = requestBody(route);
    const operation: Schema = {
      operationId,
      tags: [service],
      ...(comment && { summary: firstSentence(comment) }),
      ...(description && { description }),
      ...(rules && { security: security(rules) }),
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
    description: "An error: what REST answers with any status other than 2xx.",
    properties: {
      code: { type: "integer", format: "int32", description: "The gRPC code (google.rpc.Code), e.g. 5 for NOT_FOUND." },
      message: { type: "string", description: "What went wrong, for developers." },
      details: { type: "array", items: ANY, description: "Machine-readable details, e.g. buf.validate.Violations naming every invalid field." },
    },
  });
  const services = new Map(routes.map((r) => [r.method.parent.name, r.method.parent.typeName]));
  const tags = [...services.keys()].sort().map((name) => ({ name, ...described(PROTO_COMMENTS[services.get(name)!]) }));
  return {
    openapi: "3.1.0",
    info: { title: info.title, version: info.version },
    ...(info.serverUrl && { servers: [{ url: info.serverUrl }] }),
    tags,
    paths: sortKeys(paths),
    components: {
      securitySchemes: {
        [BEARER]: {
          type: "http",
          scheme: "bearer",
          description:
            "A personal access token: `Authorization: Bearer <token>`. An operation's security lists the permission " +
            "it needs (a role name, as OpenAPI 3.1 allows for non-OAuth schemes); `[]` marks a public one.",
        },
      },
      schemas: sortKeys(Object.fromEntries(schemas)),
    },
  };
}

function fieldComment(field: DescField): string | undefined {
  return PROTO_COMMENTS[`${field.parent.typeName}.${field.name}`];
}

/** A path variable may name a nested field (`target.id`). */
function pathComment(input: DescMessage, path: string): string | undefined {
  let message: DescMessage | undefined = input;
  let field: DescField | undefined;
  for (const name of path.split(".")) {
    field = message?.fields.find((f) => f.name === name);
    message = field?.message;
  }
  return field && fieldComment(field);
}

/** `{description}` joined from the given parts, or nothing when there are none. */
function described(...parts: (string | undefined)[]): { description?: string } {
  const text = parts.filter(Boolean).join(" ");
  return text ? { description: text } : {};
}

/** Up to the first full stop followed by a space (or the whole comment). */
function firstSentence(text: string): string {
  const end = text.search(/\.(\s|$)/);
  return end < 0 ? text : text.slice(0, end + 1);
}

/** Public operations take no token; others a bearer token with the permission as its role. */
function security(rules: MethodRules): Schema[] {
  if (rules.permission === PUBLIC) return [];
  return [{ [BEARER]: rules.permission === AUTHENTICATED ? [] : [rules.permission] }];
}

function rulesNote(rules: MethodRules | undefined): string | undefined {
  if (!rules) return undefined;
  const access =
    rules.permission === PUBLIC
      ? "Public: no token needed."
      : rules.permission === AUTHENTICATED
        ? "Needs any valid token."
        : `Needs the permission \`${rules.permission}\`.`;
  const flags = rules.features.length > 0 ? ` Runs only while the feature flags ${rules.features.map((f) => `\`${f}\``).join(", ")} are on.` : "";
  return access + flags;
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
