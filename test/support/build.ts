import { spawnSync } from "node:child_process";

/**
 * vitest globalSetup: compiles src/ into dist/ for the tests that start the service as its
 * own process (`node dist/src/main.js`, as `npm start` does), only when a source changed
 * since the last build (scripts/build-if-changed.mjs, as `npm start` does). Type errors are
 * `npm run typecheck`'s to report; tsc emits JavaScript regardless.
 */
export default function build(): void {
  const result = spawnSync(process.execPath, ["scripts/build-if-changed.mjs"], { stdio: "inherit" });
  if (result.error) throw result.error;
}
