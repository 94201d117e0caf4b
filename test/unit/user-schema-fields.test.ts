import { describe, expect, it } from "vitest";
import { mergePatch, readableData, searchableFields, searchableValues, unwritableChanges } from "../../src/domain/user-schema/fields.js";

/** What a schema says of its fields beside validity (src/domain/user-schema/fields.ts). */

const SCHEMA = {
  type: "object",
  $defs: { city: { type: "string", "urn:platform:searchable": true } },
  properties: {
    name: { type: "string" },
    salary: { type: "integer", "urn:platform:permission": { owner: "rw" } },
    diary: { type: "string", "urn:platform:permission": { self: "rw" } },
    "a/b~c": { type: "string", "urn:platform:searchable": true },
    hidden: { type: "string", "urn:platform:searchable": true, "urn:platform:permission": { self: "r" } },
    address: {
      type: "object",
      "urn:platform:permission": { owner: "rw", self: "rw" },
      properties: {
        city: { $ref: "#/$defs/city" },
        code: { type: "integer", "urn:platform:searchable": true },
        secret: { type: "string", "urn:platform:permission": { owner: "r" } },
      },
    },
  },
};

describe("field permissions", () => {
  const data = { name: "N", salary: 1, diary: "d", extra: "x", address: { city: "C", secret: "s", other: 1 } };

  it("shows each party only what it may read; an unannotated field takes the nearest annotation above it", () => {
    expect(readableData(SCHEMA, data, "owner")).toEqual({ name: "N", salary: 1, extra: "x", address: { city: "C", secret: "s", other: 1 } });
    expect(readableData(SCHEMA, data, "self")).toEqual({ name: "N", extra: "x", diary: "d", address: { city: "C", other: 1 } });
  });

  it("names the changed fields a party may not write, member by member, with escaped pointers", () => {
    expect(unwritableChanges(SCHEMA, data, data, "self")).toEqual([]);
    expect(unwritableChanges(SCHEMA, data, { ...data, name: "M", diary: "e", address: { ...data.address, city: "D" } }, "self")).toEqual(["/name"]);
    expect(unwritableChanges(SCHEMA, data, { ...data, address: { city: "C", secret: "t", other: 1 } }, "owner")).toEqual(["/address/secret"]);
    expect(unwritableChanges(SCHEMA, data, { ...data, address: undefined } as never, "owner")).toEqual(["/address/secret"]);
    expect(unwritableChanges(SCHEMA, {}, { "a/b~c": "x", diary: "y" }, "owner")).toEqual(["/diary"]);
    expect(unwritableChanges(SCHEMA, {}, { "a/b~c": "x", diary: "y" }, "self")).toEqual(["/a~1b~0c"]);
  });
});

describe("searchable fields", () => {
  it("are the marked ones owners may read, through local references, as escaped JSON pointers", () => {
    expect(searchableFields(SCHEMA)).toEqual(["/a~1b~0c", "/address/city", "/address/code"]);
  });

  it("index strings as they are and numbers and booleans as JSON; objects and absent fields not at all", () => {
    expect(searchableValues(SCHEMA, { "a/b~c": "v", address: { city: "Bern", code: 3000 }, hidden: "h" })).toEqual([
      { field: "/a~1b~0c", value: "v" },
      { field: "/address/city", value: "Bern" },
      { field: "/address/code", value: "3000" },
    ]);
    expect(searchableValues(SCHEMA, { address: { city: { nested: true } } } as never)).toEqual([]);
  });
});

describe("JSON merge patch (RFC 7386, its appendix's examples)", () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"],
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  it.each(cases)("%j patched with %j is %j", (target, patch, result) => {
    expect(mergePatch(target as never, patch as never)).toEqual(result);
  });
});
