// `npm start` builds only what changed since its last build: the service (TypeScript into
// dist/) and the console (Vite into dist/console/). A start with nothing changed skips both
// compilers (seconds each) and serves at once.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

const BUILDS = [
  {
    name: "service",
    stamp: "dist/.build-stamp",
    output: "dist/src/main.js",
    inputs: ["src", "gen", "tsconfig.json", "tsconfig.build.json", "package-lock.json"],
    command: ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"],
  },
  {
    name: "console",
    stamp: "dist/console/.build-stamp",
    output: "dist/console/index.html",
    inputs: ["console", "gen", "package-lock.json"],
    command: ["node_modules/vite/bin/vite.js", "build", "--config", "console/vite.config.ts", "--logLevel", "warn"],
    // A production build whatever the caller's NODE_ENV: under vitest (NODE_ENV=test) Vite
    // would bundle React's development build, four times the size and slower.
    env: { NODE_ENV: "production" },
    // A production install (npm ci --omit=dev) has no Vite: it serves the console built before, if any.
    available: () => existsSync("node_modules/vite/bin/vite.js"),
    report: consoleReport,
  },
];

function newest(path) {
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  return readdirSync(path).reduce((max, name) => Math.max(max, newest(join(path, name))), info.mtimeMs);
}

for (const build of BUILDS) {
  const built = statSync(build.stamp, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const changed = build.inputs.reduce((max, input) => Math.max(max, newest(input)), 0);
  if (built > changed && existsSync(build.output)) continue;
  if (build.available && !build.available()) {
    console.warn(`build-if-changed: the ${build.name} is not built and its build tools are not installed (npm ci installs them)`);
    continue;
  }
  const started = Date.now();
  const result = spawnSync(process.execPath, build.command, { stdio: "inherit", env: { ...process.env, ...build.env } });
  if (result.status !== 0) process.exit(result.status ?? 1);
  writeFileSync(build.stamp, `${new Date(started).toISOString()}\n`);
  build.report?.();
}

/** The console's first page: the scripts and styles index.html loads, gzipped (the budget: 250 KB of JavaScript). */
function consoleReport() {
  const html = readFileSync("dist/console/index.html", "utf8");
  const files = [...html.matchAll(/(?:src|href)="\/ui\/console\/(assets\/[^"]+)"/g)].map((m) => m[1]);
  const gzipped = (ext) => files.filter((f) => f.endsWith(ext)).reduce((sum, f) => sum + gzipSync(readFileSync(join("dist/console", f))).length, 0);
  console.log(`console: first page ${(gzipped(".js") / 1024).toFixed(1)} KB of JavaScript and ${(gzipped(".css") / 1024).toFixed(1)} KB of CSS, gzipped`);
}
