import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { spawnService, waitReady, type ChildService } from "../support/child-service.js";

// Every test starts a service on a fresh database (PGlite: about 10 s on an idle two-core
// machine, migrations and bootstrap); beside the suite's other files it has taken over 30 s.
vi.setConfig({ testTimeout: 120_000 });

const run = promisify(execFile);

/** Every file and directory below `dir`, with its permission bits. */
async function modes(dir: string): Promise<{ path: string; dir: boolean; mode: number }[]> {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name);
    found.push({ path, dir: entry.isDirectory(), mode: (await stat(path)).mode & 0o777 });
  }
  return found;
}

const createTarget = (service: { baseUrl: string }, token: string, name: string) =>
  fetch(`${service.baseUrl}/resources/v3alpha/targets`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify({ name, restWebhook: { url: "https://example.com" } }),
  });
const searchTargets = (service: { baseUrl: string }, token: string) =>
  fetch(`${service.baseUrl}/resources/v3alpha/targets/_search`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: "[]" });

/** The embedded database's data directory, as two `npm start`s on one machine meet it. */
describe("the PGlite data directory", () => {
  let root: string;
  const running: ChildService[] = [];
  const start = async (env: Record<string, string>) => {
    const service = await spawnService(env);
    running.push(service);
    return service;
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "platform-datadir-"));
  });
  afterAll(async () => {
    await Promise.all(running.map((s) => s.stop("SIGKILL")));
    await rm(root, { recursive: true, force: true });
  });

  it("is taken by one process: a second exits non-zero naming the directory and the holder's pid; kill -9 leaves it to the next", async () => {
    const dataDir = join(root, "shared");
    const first = await start({ PLATFORM_DATA_DIR: dataDir });
    await waitReady(first);
    const token = (await readFile(join(dataDir, "admin.pat"), "utf8")).trim();
    expect((await createTarget(first, token, "before-crash")).status).toBe(201);

    const second = await start({ PLATFORM_DATA_DIR: dataDir });
    const { code } = await second.exited;
    expect(code).not.toBe(0);
    expect(second.output()).toContain(dataDir);
    expect(second.output()).toContain(`process ${first.process.pid}`);
    // The first one never noticed.
    expect((await searchTargets(first, token)).status).toBe(200);

    first.process.kill("SIGKILL");
    await first.exited;
    const third = await start({ PLATFORM_DATA_DIR: dataDir });
    await waitReady(third);
    const found = (await (await searchTargets(third, token)).json()) as { result: { target: { name: string } }[] };
    // The acknowledged write survived kill -9.
    expect(found.result.map((r) => r.target.name)).toContain("before-crash");
    await third.stop();
    const { code: stopped } = await third.exited;
    expect(stopped).toBe(0);
  });

  it("is taken over by exactly one of several processes that find a dead holder's lock at once", async () => {
    const dataDir = join(root, "race");
    await mkdir(dataDir, { recursive: true });
    // A holder that no longer runs: a pid far above any this machine hands out.
    await writeFile(join(dataDir, "platform.lock"), JSON.stringify({ pid: 4_000_000, started: "1" }));
    // The taker holds on until every other one has answered: a taker that exited early would
    // leave a dead holder's lock, rightly taken over by a starter slowed down by a loaded machine.
    const done = join(root, "race-done");
    const script = `Promise.all([import(${JSON.stringify(join(process.cwd(), "dist/src/store/data-dir-lock.js"))}), import("node:fs")])
      .then(([m, fs]) => m.lockDataDir(${JSON.stringify(dataDir)}).then(() => {
        console.log("took");
        const t = setInterval(() => fs.existsSync(${JSON.stringify(done)}) && clearInterval(t), 50);
        setTimeout(() => clearInterval(t), 20_000).unref();
      }, (e) => console.log(e.name)));`;
    let answered = 0;
    const runs = Array.from({ length: 6 }, () =>
      run(process.execPath, ["--input-type=module", "-e", script]).then(async (r) => {
        if (++answered === 5) await writeFile(done, "");
        return r.stdout.trim();
      }),
    );
    const outcomes = await Promise.all(runs);
    expect(outcomes.filter((o) => o === "took")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "DataDirInUse")).toHaveLength(5);
  });

  it("is created 0700 and everything written in it is 0600 (files) or 0700 (directories)", async () => {
    const dataDir = join(root, "fresh");
    const service = await start({ PLATFORM_DATA_DIR: dataDir });
    await waitReady(service);
    const token = (await readFile(join(dataDir, "admin.pat"), "utf8")).trim();
    expect((await createTarget(service, token, "written")).status).toBe(201);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    const entries = await modes(dataDir);
    expect(entries.length).toBeGreaterThan(20);
    const wide = entries.filter((e) => e.mode !== (e.dir ? 0o700 : 0o600));
    expect(wide).toEqual([]);
    await service.stop();
  });

  it("keeps the mode of a directory someone else created, but narrows the files in it", async () => {
    const dataDir = join(root, "precreated");
    await mkdir(join(dataDir, "pgdata"), { recursive: true });
    await chmod(dataDir, 0o755);
    await writeFile(join(dataDir, "left-by-an-older-version"), "x", { mode: 0o644 });
    await chmod(join(dataDir, "left-by-an-older-version"), 0o644);
    const service = await start({ PLATFORM_DATA_DIR: dataDir });
    await waitReady(service);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o755);
    const wide = (await modes(dataDir)).filter((e) => e.mode !== (e.dir ? 0o700 : 0o600));
    expect(wide).toEqual([]);
    await service.stop();
  });

  it("npm run admin-token issues a new admin token and sign-in link, refusing while the service runs", async () => {
    const dataDir = join(root, "renew");
    const env = { PLATFORM_DATA_DIR: dataDir, PLATFORM_BOOTSTRAP_PAT_EXPIRES: "1h" };
    const service = await start(env);
    await waitReady(service);
    const first = (await readFile(join(dataDir, "admin.pat"), "utf8")).trim();
    const invite = join(dataDir, "admin-invite.url");
    const firstLink = new URL((await readFile(invite, "utf8")).trim());
    expect(firstLink.pathname).toBe("/ui/login/invite");
    expect([...firstLink.searchParams.keys()]).toEqual(["user", "code", "returnTo"]);
    expect(firstLink.searchParams.get("returnTo")).toBe("/ui/console/");
    expect((await stat(invite)).mode & 0o777).toBe(0o600);

    const cli = () => run(process.execPath, ["dist/src/cli/admin-token.js"], { env: { PATH: process.env.PATH ?? "", ...env } });
    const refused = await cli().then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toContain(`process ${service.process.pid}`);

    await service.stop();
    const { stderr } = await cli();
    expect(stderr).toMatch(/valid until \d{4}-/);
    const renewed = (await readFile(join(dataDir, "admin.pat"), "utf8")).trim();
    expect(renewed).not.toBe(first);
    expect((await stat(join(dataDir, "admin.pat"))).mode & 0o777).toBe(0o600);

    // The person's link is new as well: the old invitation's code is void, the new one sets a password.
    expect(stderr).toContain("admin-invite.url");
    const link = new URL((await readFile(invite, "utf8")).trim());
    expect(link.searchParams.get("code")).not.toBe(firstLink.searchParams.get("code"));

    const again = await start(env);
    await waitReady(again);
    expect((await searchTargets(again, renewed)).status).toBe(200);
    expect((await searchTargets(again, "not-a-token-at-all-0123456789")).status).toBe(401);
    const accept = (l: URL) =>
      fetch(`${again.baseUrl}${l.pathname}?${new URLSearchParams({ user: l.searchParams.get("user")!, returnTo: "/ui/console/" })}`, {
        method: "POST",
        body: new URLSearchParams({
          user: l.searchParams.get("user")!,
          code: l.searchParams.get("code")!,
          password: "Renewed-Pa55word!",
          passwordConfirmation: "Renewed-Pa55word!",
        }),
      }).then(async (r) => [r.status, await r.text()] as const);
    expect((await accept(firstLink))[0]).toBe(400);
    const [status, page] = await accept(link);
    expect(status).toBe(200);
    expect(page).toContain('<a href="/ui/console/">Continue</a>');
    await again.stop();
  });
});
