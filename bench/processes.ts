import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import { HOST, ROOT } from "./settings.js";

export interface Child {
  process: ChildProcess;
  /** The last lines the child wrote to stderr, for error messages. */
  stderr(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `node [nodeArgs] <script>` with the given environment; stdout stays readable by the caller. */
export function startNode(script: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Child {
  const child = spawn(process.execPath, [...nodeArgs, script], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let errors = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    errors = (errors + chunk).slice(-4000);
    process.stderr.write(chunk.replace(/^/gm, `[${script.split("/").pop()}] `));
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  return {
    process: child,
    stderr: () => errors,
    async stop(graceMs = 5000) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A port of 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it returns true; fails when the child exits or time runs out. */
export async function waitFor(child: Child, what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) {
      throw new Error(`${what}: the process exited with code ${child.process.exitCode}\n${child.stderr()}`);
    }
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms\n${child.stderr()}`);
}

/**
 * CPU time (user + system, all threads) a process has used so far, in ms, from
 * /proc/<pid>/stat; undefined where there is no such file.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return readStat(`/proc/${pid}/stat`).cpuMs;
  } catch {
    return undefined;
  }
}

/**
 * CPU time (ms) so far of a process's threads, summed by kind: its main thread, libuv's
 * threadpool (named `libuv-worker`: password hashes, file and DNS work) and the rest (V8's
 * compiler and garbage-collector helpers, the inspector); undefined where there is no /proc.
 * The libuv of Node 20 leaves its threads unnamed: then only the main thread is told apart.
 */
export function threadsCpuMs(pid: number | undefined): { main: number; threadpool?: number; other?: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const sums = { main: 0, threadpool: 0, other: 0 };
    let named = false;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let thread: ReturnType<typeof readStat>;
      try {
        thread = readStat(`/proc/${pid}/task/${tid}/stat`);
      } catch {
        continue; // Ended between the listing and the read.
      }
      if (Number(tid) === pid) sums.main += thread.cpuMs;
      else if (thread.name === "libuv-worker") {
        sums.threadpool += thread.cpuMs;
        named = true;
      } else sums.other += thread.cpuMs;
    }
    return named ? sums : { main: sums.main };
  } catch {
    return undefined;
  }
}

/**
 * A process's or thread's stat file: its command name, the fields after it (field 3 on; the
 * name may hold spaces) and its CPU time (user + system) in ms, from clock ticks of USER_HZ,
 * 100 on Linux.
 */
function readStat(path: string): { name: string; fields: string[]; cpuMs: number } {
  const stat = readFileSync(path, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), fields, cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 };
}

/** CPU of a process and its children (a service with PLATFORM_WORKERS > 1: the primary and its workers). */
export function processTreeCpuMs(pid: number | undefined): number | undefined {
  const own = processCpuMs(pid);
  if (own === undefined) return undefined;
  let total = own;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(readStat(`/proc/${entry}/stat`).fields[1]) === pid) total += processCpuMs(Number(entry)) ?? 0;
    } catch {
      // Gone between the listing and the read.
    }
  }
  return total;
}

/**
 * What a run must undo (children, databases), undone in reverse order at its end and on
 * SIGINT or SIGTERM, so that no run leaves processes or databases behind.
 */
export function cleanupStack(log: (message: string) => void) {
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) await Promise.resolve(fn()).catch((e) => log(`cleanup failed: ${String(e)}`));
  };
  process.once("SIGINT", () => void cleanup().finally(() => process.exit(130)));
  process.once("SIGTERM", () => void cleanup().finally(() => process.exit(143)));
  return { cleanups, cleanup };
}
