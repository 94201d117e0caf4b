import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

const isObject = (v: JsonValue | undefined): v is JsonObject => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The JSON merge patch (RFC 7386) that turns `before` into `after`: a member gone is null, an
 * object changed is patched member by member, anything else changed is replaced whole (arrays
 * too: a merge patch cannot reach into one). Only what changed is sent, so fields the reader
 * was not shown (the schema's read permissions) are never touched, and a field it may read
 * but not write passes unless it was changed.
 */
export function mergePatch(before: JsonObject, after: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const key of Object.keys(before)) if (!(key in after)) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    const old = before[key];
    if (isObject(old) && isObject(value)) {
      const inner = mergePatch(old, value);
      if (Object.keys(inner).length > 0) patch[key] = inner;
    } else if (!(key in before) || !same(old, value)) patch[key] = value;
  }
  return patch;
}

function same(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && same(a[k], b[k]));
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => same(v, b[i]));
  return a === b;
}
