// @ts-check
/**
 * The linter (issue 37): ESLint's and typescript-eslint's recommended rules without type
 * information (`tsc --noEmit` already checks types, and a type-aware run costs minutes in CI),
 * formatting left to Prettier, and the one floor boundary an import graph cannot see: SQL is
 * written only where tables are owned (docs/architecture.md, "The floors").
 */
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

/** Where queries may be built: the store, the domain (resource tables), the engines (their outboxes) and the provider's storage adapter. */
const OWNS_TABLES = ["src/store/**", "src/domain/**", "src/engines/**", "src/oidc/adapters/**"];
const QUERY_BUILDERS = "selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto|selectNoFrom";

export default tseslint.config(
  { ignores: ["dist/**", "gen/**", "node_modules/**", "test-results/**", "bench/results/**", "data/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly", Buffer: "readonly" } },
    rules: {
      // `_` names what a destructuring leaves out on purpose.
      "@typescript-eslint/no-unused-vars": ["error", { varsIgnorePattern: "^_", argsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
    },
  },
  {
    // A migration speaks to the schema of its day, which the current table types do not describe (Kysely's advice: Kysely<any>).
    files: ["src/store/migrations/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["src/**/*.ts"],
    ignores: OWNS_TABLES,
    rules: {
      "no-restricted-imports": [
        "error",
        { paths: [{ name: "kysely", importNames: ["sql"], message: "SQL belongs to the floor that owns the table: call a domain or store function." }] },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: `CallExpression[callee.property.name=/^(${QUERY_BUILDERS})$/]`,
          message: "SQL belongs to the floor that owns the table (src/store, src/domain, src/engines, src/oidc/adapters): call a domain or store function.",
        },
      ],
    },
  },
);
