/*
 * What a schema says of its users' fields beside validity: who may read and write each
 * (`"urn:platform:permission": {"owner": "rw", "self": "r"}`) and which are searchable
 * (`"urn:platform:searchable": true`). A field is found by following `properties` (and
 * references into the schema itself) from the root; a field without an annotation takes the
 * nearest annotation above it, and at the root owners may read and write, users only read.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };
type Node = Record<string, unknown>;

/** Who acts on a user's data: whoever manages users of its organization, or the user itself. */
export type Party = "owner" | "self";
type Access = { owner: string; self: string };

export const PERMISSION_KEYWORD = "urn:platform:permission";
export const SEARCHABLE_KEYWORD = "urn:platform:searchable";

const DEFAULT_ACCESS: Access = { owner: "rw", self: "r" };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A JSON pointer's token (RFC 6901): "~" and "/" escaped. */
const token = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** The node a local reference ("#/$defs/name") points to; checkSchema refused every other kind. */
function resolved(root: Node, node: Node, seen = 0): Node {
  const ref = node.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#") || seen > 32) return node;
  let target: unknown = root;
  for (const part of ref.slice(1).split("/").slice(1)) {
    if (!isObject(target)) return node;
    target = target[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return isObject(target) ? resolved(root, target, seen + 1) : node;
}

/** The schema of a property, or undefined for one the schema does not describe. */
function propertyNode(root: Node, node: Node | undefined, key: string): Node | undefined {
  if (!node) return undefined;
  const properties = resolved(root, node).properties;
  const child = isObject(properties) ? properties[key] : undefined;
  return isObject(child) ? resolved(root, child) : undefined;
}

/** An annotated field grants exactly what it names: a party it leaves out gets nothing. */
function accessAt(node: Node | undefined, above: Access): Access {
  const annotation = node?.[PERMISSION_KEYWORD];
  if (!isObject(annotation)) return above;
  return { owner: typeof annotation.owner === "string" ? annotation.owner : "", self: typeof annotation.self === "string" ? annotation.self : "" };
}

/** The data with only the fields `party` may read; an object left without a readable field is left out. */
export function readableData(schema: Node, data: JsonObject, party: Party): JsonObject {
  const walk = (value: JsonObject, node: Node | undefined, above: Access): JsonObject => {
    const shown: JsonObject = {};
    for (const [key, child] of Object.entries(value)) {
      const childNode = propertyNode(schema, node, key);
      const access = accessAt(childNode, above);
      if (isObject(child)) {
        // Member by member: a member may grant what its object does not, or the other way round.
        const inner = walk(child as JsonObject, childNode, access);
        if (access[party].includes("r") || Object.keys(inner).length > 0) shown[key] = inner;
      } else if (access[party].includes("r")) shown[key] = child;
    }
    return shown;
  };
  return walk(data, schema, accessAt(schema, DEFAULT_ACCESS));
}

function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && deepEqual(a[k], (b as JsonObject)[k]));
  }
  return false;
}

/** The JSON pointers of the fields that differ between `before` and `after` and that `party` may not write. */
export function unwritableChanges(schema: Node, before: JsonObject, after: JsonObject, party: Party): string[] {
  const refused: string[] = [];
  const walk = (a: Json | undefined, b: Json | undefined, node: Node | undefined, access: Access, pointer: string) => {
    if (deepEqual(a, b)) return;
    // An object changed member by member is judged per member: each may be annotated differently.
    if ((isObject(a) || isObject(b)) && (a === undefined || isObject(a)) && (b === undefined || isObject(b))) {
      const left = (isObject(a) ? a : {}) as JsonObject;
      const right = (isObject(b) ? b : {}) as JsonObject;
      for (const key of new Set([...Object.keys(left), ...Object.keys(right)])) {
        const childNode = propertyNode(schema, node, key);
        walk(left[key], right[key], childNode, accessAt(childNode, access), `${pointer}/${token(key)}`);
      }
      return;
    }
    if (!access[party].includes("w")) refused.push(pointer);
  };
  walk(before, after, schema, accessAt(schema, DEFAULT_ACCESS), "");
  return refused;
}

/** The JSON pointers of the schema's searchable fields that owners may read. */
export function searchableFields(schema: Node): string[] {
  const found: string[] = [];
  const walk = (node: Node, access: Access, pointer: string, depth: number) => {
    const properties = node.properties;
    if (!isObject(properties) || depth > 16) return;
    for (const [key, raw] of Object.entries(properties)) {
      if (!isObject(raw)) continue;
      const child = resolved(schema, raw);
      const childAccess = accessAt(child, access);
      const childPointer = `${pointer}/${token(key)}`;
      if (child[SEARCHABLE_KEYWORD] === true && childAccess.owner.includes("r")) found.push(childPointer);
      walk(child, childAccess, childPointer, depth + 1);
    }
  };
  walk(resolved(schema, schema), accessAt(schema, DEFAULT_ACCESS), "", 0);
  return found;
}

/** The value at a JSON pointer, when there is one. */
function valueAt(data: JsonObject, pointer: string): Json | undefined {
  let value: Json | undefined = data;
  for (const part of pointer.split("/").slice(1)) {
    if (!isObject(value)) return undefined;
    value = (value as JsonObject)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return value;
}

/** What the search index keeps of a user's data: its searchable scalar fields, as text (numbers and booleans as JSON). */
export function searchableValues(schema: Node, data: JsonObject): { field: string; value: string }[] {
  return searchableFields(schema).flatMap((field) => {
    const value = valueAt(data, field);
    if (typeof value === "string") return [{ field, value }];
    if (typeof value === "number" || typeof value === "boolean") return [{ field, value: JSON.stringify(value) }];
    return [];
  });
}

/** RFC 7386: null removes a member, an object merges member by member, anything else replaces. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...(target as JsonObject) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
