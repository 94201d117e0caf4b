import { createInterface } from "node:readline";
import { join } from "node:path";
import { startNode } from "./processes.js";
import { PROFILE_DIR, ROOT } from "./settings.js";

export interface Baseline {
  http1Port: number;
  http2Port: number;
  /** The baseline's process, for its CPU time. */
  pid: number | undefined;
  stop(): Promise<void>;
}

/** Starts dist/bench/baseline-server.js and waits for the ports it prints. */
export async function startBaseline(databaseUrl: string, instanceId: string): Promise<Baseline> {
  const child = startNode(
    join(ROOT, "dist/bench/baseline-server.js"),
    {
      ...process.env,
      BASELINE_DATABASE_URL: databaseUrl,
      BASELINE_INSTANCE_ID: instanceId,
    },
    PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${join(PROFILE_DIR, "baseline")}`] : [],
  );
  const lines = createInterface({ input: child.process.stdout! });
  try {
    const first = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`baseline: no ports after 15 s\n${child.stderr()}`)), 15_000);
      lines.once("line", (line) => {
        clearTimeout(timer);
        resolve(line);
      });
      child.process.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`baseline: exited with code ${code}\n${child.stderr()}`));
      });
    });
    const ports = JSON.parse(first) as { http1: number; http2: number };
    return { http1Port: ports.http1, http2Port: ports.http2, pid: child.process.pid, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}
