import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cruise, type ICruiseResult } from "dependency-cruiser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** The import rules of .dependency-cruiser.cjs (docs/architecture.md, "The floors"), on small trees made for the purpose. */
const RULES = createRequire(import.meta.url)("../../.dependency-cruiser.cjs").forbidden;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "floors-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** The rules broken by a tree of the given files (path → source). */
async function violations(name: string, files: Record<string, string>): Promise<string[]> {
  const base = join(root, name);
  for (const [path, source] of Object.entries(files)) {
    await mkdir(join(base, path, ".."), { recursive: true });
    await writeFile(join(base, path), source);
  }
  // Imports name .js files, as in src/: resolved to their .ts sources, as the project's tsconfig does for the real run.
  const resolve = { extensions: [".ts", ".js"], extensionAlias: { ".js": [".ts", ".js"] } };
  const result = (await cruise(["src"], { baseDir: base, validate: true, ruleSet: { forbidden: RULES }, tsPreCompilationDeps: true }, resolve))
    .output as ICruiseResult;
  return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
}

describe("the floors of src/", () => {
  it("refuses domain/ importing an engine, the login pages or the RPC layer", async () => {
    expect(
      await violations("upward", {
        "src/domain/user/a.ts":
          'import { send } from "../../engines/notifications/send.js";\nimport { page } from "../../oidc/login/page.js";\nexport const a = [send, page];\n',
        "src/engines/notifications/send.ts": "export const send = 1;\n",
        "src/oidc/login/page.ts": "export const page = 1;\n",
      }),
    ).toEqual([
      "domain-below-engines-pages-and-rpc: src/domain/user/a.ts → src/engines/notifications/send.ts",
      "domain-below-engines-pages-and-rpc: src/domain/user/a.ts → src/oidc/login/page.ts",
    ]);
  });

  it("lets domain/ use the floor below it, and the engines use domain/", async () => {
    expect(
      await violations("downward", {
        "src/domain/user/a.ts": 'import { db } from "../../store/db.js";\nimport { hash } from "../../crypto/hash.js";\nexport const a = [db, hash];\n',
        "src/store/db.ts": "export const db = 1;\n",
        "src/crypto/hash.ts": "export const hash = 1;\n",
        "src/engines/notifications/send.ts": 'import { a } from "../../domain/user/a.js";\nexport const send = a;\n',
        "src/rpc/service.ts": 'import { send } from "../engines/notifications/send.js";\nexport const service = send;\n',
      }),
    ).toEqual([]);
  });

  it("refuses an engine importing a way in, and the bottom floor importing anything above it", async () => {
    expect(
      await violations("engines-and-bottom", {
        "src/engines/actions/call.ts": 'import { page } from "../../oidc/page.js";\nexport const call = page;\n',
        "src/oidc/page.ts": "export const page = 1;\n",
        "src/store/append.ts": 'import { rule } from "../domain/rule.js";\nexport const append = rule;\n',
        "src/domain/rule.ts": "export const rule = 1;\n",
      }),
    ).toEqual([
      "bottom-floor-stays-below: src/store/append.ts → src/domain/rule.ts",
      "engines-below-the-ways-in: src/engines/actions/call.ts → src/oidc/page.ts",
    ]);
  });

  it("refuses an import circle", async () => {
    const found = await violations("circle", {
      "src/store/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
      "src/store/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
    });
    expect(found).toEqual(["no-circular: src/store/a.ts → src/store/b.ts"]);
  });
});
