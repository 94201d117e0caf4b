import { readFileSync } from "node:fs";
import { link, mkdir, readFile, rmdir, stat, unlink, writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";

/** Another live process serves from this data directory. */
export class DataDirInUse extends Error {
  override name = "DataDirInUse";
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`the data directory ${dir} is in use by process ${pid}: stop that process, or give this one another PLATFORM_DATA_DIR`);
  }
}

interface Holder {
  pid: number;
  /** When the process started, so that a recycled pid is not taken for the holder. */
  started: string | undefined;
}

const LOCK_FILE = "platform.lock";

/**
 * Takes the embedded database's data directory for this process: PGlite is one process's
 * database, and two on the same files lose acknowledged writes. The lock is a file naming
 * the holder; one left by a process that died (kill -9, power loss) is taken over, because
 * its pid no longer runs (or runs a process that started at another time).
 */
export async function lockDataDir(dir: string): Promise<{ release(): Promise<void> }> {
  const path = join(dir, LOCK_FILE);
  const me: Holder = { pid: process.pid, started: startTime(process.pid) };
  const mine = JSON.stringify(me);
  const pending = `${path}.${process.pid}`;
  await writeFile(pending, mine, { mode: 0o600 });
  try {
    // Bounded: each round takes the lock, meets a live holder, removes a dead one or waits a
    // turn; a takeover abandoned by a process that died is cleared after TAKEOVER_STALE_MS.
    const deadline = Date.now() + TAKEOVER_STALE_MS + 2_000;
    while (Date.now() < deadline) {
      try {
        // link() creates the lock only if none exists: atomic, unlike a check then a write.
        await link(pending, path);
        return { release: () => releaseIfMine(path, mine) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const seen = await readFile(path, "utf8").catch(() => undefined);
      if (seen === undefined) continue;
      const holder = parse(seen);
      if (holder && isRunning(holder)) throw new DataDirInUse(dir, holder.pid);
      await removeStale(path, seen);
    }
    throw new Error(`could not take the lock ${path}: it keeps changing hands`);
  } finally {
    await unlink(pending).catch(() => {});
  }
}

/** A takeover that has not finished after this long was abandoned by a process that died. */
const TAKEOVER_STALE_MS = 10_000;

/**
 * Removes a dead holder's lock, if it is still that lock. Starters that found it dead at the
 * same time take turns (a directory as mutex: mkdir is atomic), and each looks again inside:
 * only a takeover can change a dead holder's lock, so what is seen there is what is removed.
 */
async function removeStale(path: string, judged: string): Promise<void> {
  const mutex = `${path}.takeover`;
  try {
    await mkdir(mutex);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const since = await stat(mutex).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (since > TAKEOVER_STALE_MS) await rmdir(mutex).catch(() => {});
    else await sleep(50);
    return;
  }
  try {
    const now = await readFile(path, "utf8").catch(() => undefined);
    if (now === judged) await unlink(path);
  } finally {
    await rmdir(mutex).catch(() => {});
  }
}

/** On shutdown: the lock goes only if it is still this process's. */
async function releaseIfMine(path: string, mine: string): Promise<void> {
  const now = await readFile(path, "utf8").catch(() => undefined);
  if (now === mine) await unlink(path).catch(() => {});
}

function parse(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    return typeof value.pid === "number" ? { pid: value.pid, started: value.started } : undefined;
  } catch {
    return undefined;
  }
}

function isRunning(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: it runs, under another user.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const started = startTime(holder.pid);
  return holder.started === undefined || started === undefined || started === holder.started;
}

/**
 * The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), on
 * Linux; undefined elsewhere, where a live pid alone decides.
 */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses; fields count from its end.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}
