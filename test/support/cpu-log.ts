import { appendFileSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { afterAll, beforeAll } from "vitest";

/*
 * A setup file for measuring where a run's CPU goes (vitest.config.ts adds it when
 * TEST_CPU_LOG names a file): one JSON line per test file with its wall time and the CPU
 * of its worker (`self`) and of the child processes the worker reaped meanwhile (`kids`:
 * spawned services, Chromium, slapd), in milliseconds. Files share workers, so a child
 * reaped late counts to the next file; Chromium's renderers outlive their browser's exit
 * and count to none. docs/testing.md says how it was used.
 */

const TICK_MS = 10;

function cpuTicks(): { self: number; kids: number } {
  // Past the command's closing parenthesis: state is field 0, utime 11, stime 12, cutime 13, cstime 14.
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  const n = (i: number) => Number(fields[i]);
  return { self: n(11) + n(12), kids: n(13) + n(14) };
}

let start: { self: number; kids: number; at: number; file: string } | undefined;

// eslint-disable-next-line no-empty-pattern -- vitest reads a hook's first parameter as fixtures, which it wants destructured
beforeAll(({}, suite) => {
  start = { ...cpuTicks(), at: Date.now(), file: relative(process.cwd(), suite.file.filepath) };
});

afterAll(() => {
  if (!start) return;
  const now = cpuTicks();
  const line = { file: start.file, wallMs: Date.now() - start.at, selfMs: (now.self - start.self) * TICK_MS, kidsMs: (now.kids - start.kids) * TICK_MS };
  appendFileSync(process.env.TEST_CPU_LOG!, `${JSON.stringify(line)}\n`);
});
