// `npm start` builds only when a source is newer than the last build: a start with nothing
// changed skips the TypeScript compiler (seconds) and serves at once.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const STAMP = "dist/.build-stamp";
const INPUTS = ["src", "gen", "tsconfig.json", "tsconfig.build.json", "package-lock.json"];

function newest(path) {
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  return readdirSync(path).reduce((max, name) => Math.max(max, newest(join(path, name))), info.mtimeMs);
}

const built = statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const changed = INPUTS.reduce((max, input) => Math.max(max, newest(input)), 0);
if (built > changed && statSync("dist/src/main.js", { throwIfNoEntry: false })) process.exit(0);

const started = Date.now();
const result = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(STAMP, `${new Date(started).toISOString()}\n`);
