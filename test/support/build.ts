import { spawnSync } from "node:child_process";

/**
 * vitest globalSetup: compiles src/ into dist/ once per run, for the tests that start the
 * service as its own process (`node dist/src/main.js`, as `npm start` does). Type errors
 * are `npm run typecheck`'s to report; tsc emits JavaScript regardless.
 */
export default function build(): void {
  const result = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
  if (result.error) throw result.error;
}
