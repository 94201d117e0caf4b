import type { JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { mergePatch } from "../../console/src/pages/user/merge-patch.js";

/*
 * The JSON merge patch (RFC 7386) the console sends when a schema user's data is edited as a
 * whole: applied to the old data it must give the new, and it carries only what changed, so
 * fields the editor was not shown stay as they are.
 */

/** RFC 7386's MergePatch, section 2, to check the patches against. */
function apply(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> = target !== null && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = apply(result[key], value);
  }
  return result;
}

describe("the console's JSON merge patch of a schema user's data", () => {
  const cases: { name: string; before: JsonObject; after: JsonObject; patch: JsonObject }[] = [
    { name: "unchanged", before: { a: 1, b: { c: "x" } }, after: { b: { c: "x" }, a: 1 }, patch: {} },
    { name: "a member changed", before: { a: 1, b: 2 }, after: { a: 1, b: 3 }, patch: { b: 3 } },
    { name: "a member removed", before: { a: 1, b: 2 }, after: { a: 1 }, patch: { b: null } },
    { name: "a member added", before: { a: 1 }, after: { a: 1, c: [1, 2] }, patch: { c: [1, 2] } },
    {
      name: "an object merged member by member",
      before: { address: { city: "Bern", street: "Main 1", zip: "3000" } },
      after: { address: { city: "Basel", street: "Main 1" } },
      patch: { address: { city: "Basel", zip: null } },
    },
    { name: "an array replaced whole", before: { tags: ["a", "b"] }, after: { tags: ["a"] }, patch: { tags: ["a"] } },
    { name: "an equal array left out", before: { tags: ["a", { b: 1 }] }, after: { tags: ["a", { b: 1 }] }, patch: {} },
    { name: "an object replacing a string", before: { x: "s" }, after: { x: { y: 1 } }, patch: { x: { y: 1 } } },
    { name: "a string replacing an object", before: { x: { y: 1 } }, after: { x: "s" }, patch: { x: "s" } },
  ];
  it.each(cases)("$name", ({ before, after, patch }) => {
    expect(mergePatch(before, after)).toEqual(patch);
    expect(apply(before, patch)).toEqual(after);
  });

  it("leaves a member the editor was not shown as it is", () => {
    const stored = { name: "Di", diary: "dear diary" };
    const shown = { name: "Di" };
    const patch = mergePatch(shown, { name: "Dina" });
    expect(patch).toEqual({ name: "Dina" });
    expect(apply(stored, patch)).toEqual({ name: "Dina", diary: "dear diary" });
  });
});
