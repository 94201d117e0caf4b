import { createInterface } from "node:readline";
import { join } from "node:path";
import { startNode } from "../processes.js";
import { ROOT } from "../settings.js";

export interface BaselineProvider {
  /** The provider's port (under load). */
  port: number;
  /** Mints userinfo tokens; never under load. */
  controlPort: number;
  pid: number | undefined;
  stop(): Promise<void>;
}

/** Starts dist/bench/oidc/baseline-provider.js and waits for the ports it prints. */
export async function startBaselineProvider(): Promise<BaselineProvider> {
  const child = startNode(join(ROOT, "dist/bench/oidc/baseline-provider.js"), { ...process.env });
  const lines = createInterface({ input: child.process.stdout! });
  try {
    const first = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`baseline provider: no ports after 15 s\n${child.stderr()}`)), 15_000);
      lines.once("line", (line) => {
        clearTimeout(timer);
        resolve(line);
      });
      child.process.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`baseline provider: exited with code ${code}\n${child.stderr()}`));
      });
    });
    lines.on("line", (line) => process.stderr.write(`[baseline-provider.js] ${line}\n`));
    const ports = JSON.parse(first) as { http1: number; control: number };
    return { port: ports.http1, controlPort: ports.control, pid: child.process.pid, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}
