import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import * as addFormatsModule from "ajv-formats";
import { invalidArgument } from "../errors.js";
import { PERMISSION_KEYWORD, SEARCHABLE_KEYWORD, type JsonObject } from "./fields.js";

/*
 * User schemas are JSON Schemas of draft 2020-12, checked and applied by Ajv: the most used
 * validator for JavaScript, maintained, and compiling each schema once to a function (what
 * CreateUser pays per call is that function, not an interpretation of the schema). ajv-formats
 * (same maintainers) gives `format` its meaning: without it a strict Ajv refuses every format.
 */

/** What a user schema may weigh as JSON: kept in a row, read on every write of its users. */
const MAX_SCHEMA_BYTES = 64 * 1024;

/** Compiled schemas kept: compiling costs milliseconds, applying one microseconds. */
const COMPILED_SCHEMAS = 500;

const ACCESS = { enum: ["", "r", "w", "rw"] };

// ajv-formats is CommonJS with `exports.default`: Node's ESM loader nests it one level deeper.
type AddFormats = (ajv: Ajv2020) => void;
const addFormats = ((addFormatsModule as unknown as { default: { default?: AddFormats } & AddFormats }).default.default ??
  (addFormatsModule as unknown as { default: AddFormats }).default) as AddFormats;

/** The Ajv every user schema is checked and applied with; bench/schema-users.ts builds its baseline with it too. */
export function newAjv(): Ajv2020 {
  // Strict: an unknown keyword or a misspelled type is an error, not silently no rule.
  // addUsedSchema off: a user schema's `$id` never enters Ajv's registry, where two
  // instances' schemas of the same `$id` would collide.
  const ajv = new Ajv2020({ allErrors: true, strict: true, addUsedSchema: false });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: PERMISSION_KEYWORD,
    metaSchema: { type: "object", properties: { owner: ACCESS, self: ACCESS }, additionalProperties: false },
  });
  ajv.addKeyword({ keyword: SEARCHABLE_KEYWORD, metaSchema: { type: "boolean" } });
  return ajv;
}

const ajv = newAjv();

/** Every `$ref` and `$dynamicRef` that does not point into the schema itself. */
function remoteRefs(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) remoteRefs(item, found);
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if ((key === "$ref" || key === "$dynamicRef") && typeof value === "string" && !value.startsWith("#")) found.push(value);
      else remoteRefs(value, found);
    }
  }
  return found;
}

/**
 * Checks a schema as a draft 2020-12 JSON Schema that the service can apply: at most
 * MAX_SCHEMA_BYTES as JSON, no reference outside itself (nothing is ever fetched), and
 * compiling in Ajv's strict mode. InvalidArgument naming what is wrong otherwise.
 */
export function checkSchema(schema: Record<string, unknown>): void {
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > MAX_SCHEMA_BYTES) throw invalidArgument(`the schema is ${bytes} bytes as JSON; at most ${MAX_SCHEMA_BYTES} are allowed`);
  const remote = remoteRefs(schema);
  if (remote.length > 0) {
    throw invalidArgument(`the schema refers to ${remote.map((r) => `"${r}"`).join(", ")}: only references inside the schema ("#/$defs/…") are allowed`);
  }
  try {
    ajv.removeSchema(ajv.compile(schema).schema as object);
  } catch (error) {
    throw invalidArgument(`the schema is not a valid JSON Schema (draft 2020-12): ${(error as Error).message}`);
  }
}

/** Compiled validators by schema id and revision, the least recently used dropped first. */
const compiled = new Map<string, ValidateFunction>();

function validatorOf(key: string, schema: Record<string, unknown>): ValidateFunction {
  let validate = compiled.get(key);
  if (validate) {
    compiled.delete(key);
  } else {
    validate = ajv.compile(schema);
    // Compiled functions stay ours: Ajv's registry would otherwise keep every one.
    ajv.removeSchema(schema);
    if (compiled.size >= COMPILED_SCHEMAS) compiled.delete(compiled.keys().next().value!);
  }
  compiled.set(key, validate);
  return validate;
}

/** One violation as the API names it: the JSON pointer of the value, and what is wrong with it. */
function violation(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") return `${error.instancePath}/${String(params.missingProperty)}: is required`;
  if (error.keyword === "additionalProperties") return `${error.instancePath}/${String(params.additionalProperty)}: is not allowed by the schema`;
  if (error.keyword === "unevaluatedProperties") return `${error.instancePath}/${String(params.unevaluatedProperty)}: is not allowed by the schema`;
  return `${error.instancePath || "/"}: ${error.message ?? error.keyword}`;
}

/**
 * Validates a user's data against a schema's revision; InvalidArgument naming every
 * violation with its JSON pointer otherwise. `key` names the revision (schema id and
 * revision), under which its compiled validator is kept.
 */
export function requireValidData(key: string, schema: Record<string, unknown>, data: JsonObject, described: string): void {
  const validate = validatorOf(key, schema);
  if (validate(data)) return;
  const violations = [...new Set((validate.errors ?? []).map(violation))];
  throw invalidArgument(`the data does not meet ${described}: ${violations.join("; ")}`);
}
