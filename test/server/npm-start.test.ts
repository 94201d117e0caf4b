import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../support/child-service.js";
import { until } from "../support/until.js";

/*
 * `npm start` as the README has people run it, stopped as a process manager or a terminal
 * would: SIGTERM to npm itself (not to its process group). npm runs its
 * scripts through `sh -c`, passes a signal on to that shell only, and exits: the start script
 * execs node, so that the server is the shell (issue 35 §2: npm stopped, the server went on).
 */

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function npmStart() {
  const dir = await mkdtemp(join(tmpdir(), "npm-start-"));
  dirs.push(dir);
  const port = await freePort();
  const child = spawn("npm", ["start", "--silent"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? dir,
      PLATFORM_DATA_DIR: dir,
      PLATFORM_PORT: String(port),
      PLATFORM_BIND: "127.0.0.1",
      PLATFORM_METRICS_BIND: "",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  // A first start on a fresh data dir (npm, the build check, PGlite's initdb and the migrations):
  // about 10 s on an idle two-core machine, several times that beside the suite's other files.
  await until("npm start to be ready", async () => (await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined))?.ok === true, 90_000);
  const serverPid = Number(/"pid":(\d+)/.exec(output)?.[1]);
  expect(serverPid, output).toBeGreaterThan(0);
  return { child, port, exited, serverPid, output: () => output };
}

describe("npm start", () => {
  // SIGTERM to npm alone, as a process manager sends it (a terminal's Ctrl-C reaches the whole group anyway).
  it("stops the server when npm gets SIGTERM", async () => {
    const started = await npmStart();
    started.child.kill("SIGTERM");
    await started.exited;
    await until(`the server (pid ${started.serverPid}) to exit`, () => !alive(started.serverPid), 30_000);
    expect(
      await fetch(`http://127.0.0.1:${started.port}/ready`).then(
        () => "answered",
        () => "refused",
      ),
    ).toBe("refused");
  }, 150_000);
});
