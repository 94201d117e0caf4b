import { readFile, writeFile } from "node:fs/promises";
import { getOption, hasOption, toJson, type DescMessage } from "@bufbuild/protobuf";
import { field as fieldRules, FieldRulesSchema } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import { describe, expect, it } from "vitest";
import { PLATFORM_SERVICES } from "../../src/rpc/services/index.js";

const DOC = new URL("../../docs/limits.md", import.meta.url);

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A rule value as the proto text format writes it: numbers bare, true as the rule's name alone. */
function ruleValue(value: unknown): string {
  if (typeof value === "string") return /^-?\d+(\.\d+)?s?$/.test(value) ? value : JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(ruleValue).join(", ")}]`;
  if (value !== null && typeof value === "object") return `{${rules(value as Record<string, unknown>).join(", ")}}`;
  return String(value);
}

/** `{"string":{"minLen":"1","maxLen":"200"}}` as `string: min_len 1, max_len 200`. */
function rules(json: Record<string, unknown>): string[] {
  return Object.entries(json).map(([key, value]) => {
    if (key === "cel") return (value as { message: string }[]).map((c) => `"${c.message}"`).join(", ");
    if (value === true && key !== "const") return snake(key);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return `${snake(key)}: ${rules(value as Record<string, unknown>).join(", ")}`;
    return `${snake(key)} ${ruleValue(value)}`;
  });
}

/** Every validation rule of every request of our services, from the descriptors. */
function render(): string {
  const lines = [
    "# Limits",
    "",
    "Every buf.validate rule of every request message, generated from the protos by",
    "`test/docs/limits-doc.test.ts` (`UPDATE_DOCS=1 npx vitest run test/docs` rewrites this file;",
    "the test fails while it differs). Rules of the domain that are not in the protos (uniqueness,",
    "password policy, key sizes, expiration at most ten years) are in docs/api.md.",
  ];
  const seen = new Set<string>();
  for (const service of PLATFORM_SERVICES) {
    lines.push("", `## ${service.name}`, "", "| Field | Rules |", "|---|---|");
    const visit = (message: DescMessage) => {
      if (seen.has(message.typeName)) return;
      seen.add(message.typeName);
      for (const f of message.fields) {
        if (hasOption(f, fieldRules)) {
          const described = rules(toJson(FieldRulesSchema, getOption(f, fieldRules)) as Record<string, unknown>);
          lines.push(`| \`${message.typeName.split(".").pop()}.${f.name}\` | ${described.join("; ").replace(/\|/g, "\\|")} |`);
        }
        if (f.message && f.message.typeName.startsWith("platform.")) visit(f.message);
      }
    };
    for (const method of service.methods) visit(method.input);
  }
  return `${lines.join("\n")}\n`;
}

describe("docs/limits.md", () => {
  it("lists every validation rule of the API, as the protos declare them", async () => {
    const expected = render();
    if (process.env.UPDATE_DOCS === "1") await writeFile(DOC, expected);
    expect(await readFile(DOC, "utf8").catch(() => "(missing)")).toBe(expected);
  });
});
