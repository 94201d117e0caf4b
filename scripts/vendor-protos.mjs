#!/usr/bin/env node
// Refreshes the vendored third-party .proto files under proto/ from npm packages
// already in node_modules, so that buf can compile our protos offline and the
// vendored copies always match the versions pinned in package-lock.json.
//
// Usage: node scripts/vendor-protos.mjs
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { isFieldSet } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FieldDescriptorProtoSchema, FileOptionsSchema } from "@bufbuild/protobuf/wkt";
import { file_buf_validate_validate } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";

const root = resolve(import.meta.dirname, "..");
const nodeModules = join(root, "node_modules");

// package.json is read from disk because packages with an "exports" map
// (e.g. @bufbuild/protovalidate) do not expose it to require/import.
const version = (pkg) => JSON.parse(readFileSync(join(nodeModules, pkg, "package.json"), "utf8")).version;
const header = (pkg) => `// Vendored by scripts/vendor-protos.mjs from ${pkg}@${version(pkg)}; do not edit.\n`;

function write(dest, text) {
  const file = join(root, "proto", dest);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  console.log(`wrote proto/${dest}`);
}

// Our protos import these by path, so a package move upstream must fail loudly
// here rather than as a confusing "symbol not found" from buf later.
function copy(pkg, src, dest, expectedPackage) {
  const text = readFileSync(join(nodeModules, pkg, src), "utf8");
  const found = /^package\s+([\w.]+)\s*;/m.exec(text)?.[1];
  if (found !== expectedPackage) {
    throw new Error(`${pkg}/${src}: expected package ${expectedPackage}, found ${found}`);
  }
  write(dest, `${header(pkg)}\n${text}`);
}

copy("google-proto-files", "google/api/annotations.proto", "google/api/annotations.proto", "google.api");
copy("google-proto-files", "google/api/http.proto", "google/api/http.proto", "google.api");
// The raw request body of an upload (the REST gateway's HttpBody convention, src/gateway/).
copy("google-proto-files", "google/api/httpbody.proto", "google/api/httpbody.proto", "google.api");
copy("grpc-health-check", "proto/health/v1/health.proto", "grpc/health/v1/health.proto", "grpc.health.v1");
for (const v of ["v1", "v1alpha"]) {
  const p = `grpc/reflection/${v}/reflection.proto`;
  copy("@grpc/reflection", `build/proto/${p}`, p, `grpc.reflection.${v}`);
}

// ---------------------------------------------------------------------------
// buf/validate/validate.proto: no npm package ships it as text, so print it
// back from the FileDescriptorProto embedded in @bufbuild/protovalidate.

const MAX_FIELD_NUMBER = 536870912; // exclusive end used by descriptors for "max"
const has = (field, name) => isFieldSet(field, FieldDescriptorProtoSchema.field[name]);
const typeName = (f) => (f.typeName ? f.typeName.replace(/^\./, "") : FieldDescriptorProto_Type[f.type].toLowerCase());

// Message reserved/extension ranges have an exclusive end, enum reserved ranges
// an inclusive one; callers normalise to inclusive before calling this.
const range = (start, last) => (start === last ? `${start}` : `${start} to ${last === MAX_FIELD_NUMBER - 1 ? "max" : last}`);

function defaultLiteral(f) {
  switch (f.type) {
    case FieldDescriptorProto_Type.STRING:
      return JSON.stringify(f.defaultValue);
    case FieldDescriptorProto_Type.BYTES:
      return `"${f.defaultValue}"`; // already C-escaped in the descriptor
    default:
      return f.defaultValue; // numbers, inf/nan, bools and enum value names are bare
  }
}

function field(f, inOneof) {
  // Groups and map entries cannot be written back faithfully with plain field
  // syntax; validate.proto uses neither, so refuse instead of printing garbage.
  if (f.type === FieldDescriptorProto_Type.GROUP) throw new Error(`group field ${f.name} unsupported`);
  const opts = [];
  if (has(f, "defaultValue")) opts.push(`default = ${defaultLiteral(f)}`);
  if (f.options?.packed) opts.push("packed = true");
  if (f.options?.deprecated) opts.push("deprecated = true");
  const label = inOneof ? "" : `${FieldDescriptorProto_Label[f.label].toLowerCase()} `;
  const suffix = opts.length ? ` [${opts.join(", ")}]` : "";
  return `${label}${typeName(f)} ${f.name} = ${f.number}${suffix};`;
}

function printEnum(e, indent) {
  const lines = [`${indent}enum ${e.name} {`];
  if (e.options?.allowAlias) lines.push(`${indent}  option allow_alias = true;`);
  for (const v of e.value) {
    lines.push(`${indent}  ${v.name} = ${v.number}${v.options?.deprecated ? " [deprecated = true]" : ""};`);
  }
  if (e.reservedRange.length) {
    lines.push(`${indent}  reserved ${e.reservedRange.map((r) => range(r.start, r.end)).join(", ")};`);
  }
  if (e.reservedName.length) {
    lines.push(`${indent}  reserved ${e.reservedName.map((n) => JSON.stringify(n)).join(", ")};`);
  }
  lines.push(`${indent}}`);
  return lines;
}

function printExtends(extensions, indent) {
  // Map.groupBy would be neater but needs Node 21; we support Node 20.
  const byExtendee = new Map();
  for (const x of extensions) byExtendee.set(x.extendee, [...(byExtendee.get(x.extendee) ?? []), x]);
  return [...byExtendee].flatMap(([extendee, fields]) => [
    `${indent}extend ${extendee.replace(/^\./, "")} {`,
    ...fields.map((f) => `${indent}  ${field(f, false)}`),
    `${indent}}`,
  ]);
}

function printMessage(m, indent) {
  if (m.options?.mapEntry) throw new Error(`map entry ${m.name} unsupported`);
  const inner = `${indent}  `;
  const lines = [`${indent}message ${m.name} {`];
  for (const e of m.enumType) lines.push(...printEnum(e, inner));
  for (const n of m.nestedType) lines.push(...printMessage(n, inner));

  // A proto3 "optional" field lives in a synthetic oneof that must not be
  // printed as a real oneof block.
  const inRealOneof = (f) => has(f, "oneofIndex") && !f.proto3Optional;
  const printedOneofs = new Set();
  for (const f of m.field) {
    if (!inRealOneof(f)) {
      lines.push(inner + field(f, false));
    } else if (!printedOneofs.has(f.oneofIndex)) {
      // Oneof members are contiguous in valid descriptors, so printing the
      // whole block at its first member preserves field order.
      printedOneofs.add(f.oneofIndex);
      lines.push(`${inner}oneof ${m.oneofDecl[f.oneofIndex].name} {`);
      for (const g of m.field.filter((g) => inRealOneof(g) && g.oneofIndex === f.oneofIndex)) {
        lines.push(`${inner}  ${field(g, true)}`);
      }
      lines.push(`${inner}}`);
    }
  }
  for (const r of m.extensionRange) lines.push(`${inner}extensions ${range(r.start, r.end - 1)};`);
  if (m.reservedRange.length) {
    lines.push(`${inner}reserved ${m.reservedRange.map((r) => range(r.start, r.end - 1)).join(", ")};`);
  }
  if (m.reservedName.length) {
    lines.push(`${inner}reserved ${m.reservedName.map((n) => JSON.stringify(n)).join(", ")};`);
  }
  lines.push(...printExtends(m.extension, inner));
  lines.push(`${indent}}`);
  return lines;
}

function printFile(file) {
  if (file.syntax !== "" && file.syntax !== "proto2") {
    throw new Error(`${file.name}: only proto2 is supported, got syntax "${file.syntax}"`);
  }
  const lines = ['syntax = "proto2";', "", `package ${file.package};`, ""];
  for (const dep of file.dependency) lines.push(`import "${dep}";`);
  lines.push("");
  // Only plain scalar file options (java_package, go_package, ...) are printed;
  // they are what code generators read, and they need no imports to resolve.
  for (const opt of FileOptionsSchema.fields) {
    if (opt.fieldKind === "scalar" && file.options && isFieldSet(file.options, opt)) {
      const value = file.options[opt.localName];
      lines.push(`option ${opt.name} = ${typeof value === "string" ? JSON.stringify(value) : value};`);
    }
  }
  for (const e of file.enumType) lines.push("", ...printEnum(e, ""));
  for (const m of file.messageType) lines.push("", ...printMessage(m, ""));
  if (file.extension.length) lines.push("", ...printExtends(file.extension, ""));
  if (file.service.length) throw new Error(`${file.name}: services unsupported`);
  return `${lines.join("\n")}\n`;
}

write(
  "buf/validate/validate.proto",
  header("@bufbuild/protovalidate") +
    `//
// Printed from the FileDescriptorProto embedded in @bufbuild/protovalidate,
// because no npm package ships validate.proto as text. Comments and custom
// options (e.g. the (predefined).cel rules on fields) are omitted. That is
// deliberate: this file only lets buf compile our protos that import it; the
// generated TypeScript for buf/validate is NOT used (our generated code imports
// protovalidate's own copy), so only names, numbers and types must be exact.

` +
    printFile(file_buf_validate_validate.proto),
);
