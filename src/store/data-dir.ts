import fs from "node:fs";
import { chmod, lstat, mkdir, readdir } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { lockDataDir } from "./data-dir-lock.js";

/**
 * The embedded database's directory, for the service or an admin command: created private,
 * kept private, and this process's alone until `release`.
 */
export async function openDataDir(dir: string): Promise<{ release(): Promise<void> }> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const lock = await lockDataDir(dir);
  try {
    await keepPrivate(dir);
  } catch (error) {
    await lock.release();
    throw error;
  }
  return lock;
}

/**
 * Keeps the data directory private to the service's user: everything this process creates
 * in it is 0600 (files) or 0700 (directories), and what an earlier version left wider is
 * narrowed. The directory itself keeps the mode of whoever created it.
 */
async function keepPrivate(dir: string): Promise<void> {
  // The umask covers what is created with a mode; PGlite then chmods the files of its
  // initial database to 0666 (and some it writes later to 0644), which no umask narrows.
  process.umask(0o077);
  confineChmod(dir);
  await narrow(dir);
}

const privateRoots = new Set<string>();

/**
 * PGlite's file system layer (Emscripten's NODEFS) calls node:fs's chmodSync through the
 * module object; for paths in a private root the group and other bits are dropped. Paths
 * elsewhere are untouched. Installed once per process.
 */
function confineChmod(dir: string): void {
  if (privateRoots.size === 0) {
    const chmodSync = fs.chmodSync;
    fs.chmodSync = (path: fs.PathLike, mode: fs.Mode) => {
      const inside = typeof path === "string" && [...privateRoots].some((root) => resolve(path).startsWith(root));
      chmodSync(path, inside ? Number(typeof mode === "string" ? parseInt(mode, 8) : mode) & ~0o077 : mode);
    };
  }
  privateRoots.add(resolve(dir) + sep);
}

async function narrow(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    const { mode } = await lstat(path);
    if (entry.isDirectory()) {
      if (mode & 0o077) await chmod(path, 0o700);
      await narrow(path);
    } else if (entry.isFile() && mode & 0o077) {
      await chmod(path, 0o600);
    }
  }
}
