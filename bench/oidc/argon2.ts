import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Measurement } from "../measure.js";
import { ROOT } from "../settings.js";

export interface Argon2Baseline {
  pid: number | undefined;
  /** A closed loop of verifications for `seconds` in the child. */
  run(seconds: number): Promise<Measurement>;
  stop(): Promise<void>;
}

/** Starts dist/bench/oidc/argon2-baseline.js (same environment, so the same libuv thread pool as the service). */
export async function startArgon2Baseline(): Promise<Argon2Baseline> {
  const child = spawn(process.execPath, [join(ROOT, "dist/bench/oidc/argon2-baseline.js")], {
    cwd: ROOT,
    env: process.env,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const next = async () => {
    const line = await Promise.race([lines.next(), exited.then(() => ({ done: true as const, value: undefined }))]);
    if (line.done) throw new Error("argon2 baseline: the child exited");
    return line.value;
  };
  if ((await next()) !== "ready") throw new Error("argon2 baseline: no ready line");
  return {
    pid: child.pid,
    async run(seconds) {
      child.stdin!.write(`${seconds}\n`);
      return JSON.parse(await next()) as Measurement;
    },
    async stop() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
