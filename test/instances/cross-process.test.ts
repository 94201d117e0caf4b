import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformLanguageSettings } from "../../gen/platform/settings/language/v3alpha/language_service_pb.js";
import { PlatformFeatureSettings } from "../../gen/platform/settings/feature/v3alpha/feature_service_pb.js";
import { spawnService, waitReady, type ChildService } from "../support/child-service.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { at, createInstance, INSTANCES, MEMBERS, must, ok, outcome, pollUntil, sleep, uniqueDomain, USERS, type Created } from "./helpers.js";

const POSTGRES = process.env.TEST_DATABASE_URL;
/** Well below the caches' own lifetimes (10 s for callers, 30 s for hosts): only a notification explains it. */
const WITHIN_MS = 2_000;

/**
 * Two service processes on one PostgreSQL database: process A (in this test process) makes
 * a change of access, process B (`node dist/src/main.js`) whose caches were just warmed by a
 * successful call must reflect it at once, by PostgreSQL's LISTEN/NOTIFY. PGlite serves a
 * single process, so there is nothing to test there.
 */
describe.skipIf(!POSTGRES)(
  "caches of another process follow access changes at once (postgres only; skipped without TEST_DATABASE_URL: PGlite serves one process)",
  () => {
    let a: TestServer;
    let b: ChildService;
    let dataDir: string;
    const sys = () => at(INSTANCES, "grpc", "localhost", a.service.port);
    /** A client of process A or B, on a host. */
    const onA = (service: Parameters<typeof at>[0], host: string) => at(service, "grpc", host, a.service.port);
    const onB = (service: Parameters<typeof at>[0], host: string, protocol: Parameters<typeof at>[1] = "grpc") => at(service, protocol, host, b.port);

    beforeAll(async () => {
      a = await startTestServer("postgres");
      dataDir = await mkdtemp(join(tmpdir(), "platform-instances-b-"));
      b = await spawnService({
        DATABASE_URL: (a.config.database as { url: string }).url,
        PLATFORM_MASTERKEY: "0123456789abcdef0123456789abcdef",
        PLATFORM_DATA_DIR: dataDir,
        PLATFORM_EXTERNAL_URL: "http://localhost",
        PLATFORM_DB_POOL_MAX: "4",
        LOG_LEVEL: "info",
      });
      await waitReady(b);
      // Until B listens, it bypasses its caches, and every test below would pass without notifications.
      for (let waited = 0; !b.output().includes("listening for access changes"); waited += 50) {
        if (waited > 10_000) throw new Error(`process B never listened for access changes:\n${b.output()}`);
        await sleep(50);
      }
    });
    afterAll(async () => {
      await b?.stop();
      await a?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    /** Polls a call on B until its outcome is `want`; returns the milliseconds it took. */
    async function bFollows(want: string, call: () => Promise<Awaited<ReturnType<ReturnType<typeof at>["call"]>>>, label: string): Promise<number> {
      let last = "";
      const ms = await pollUntil(async () => (last = outcome(await call())) === want, WITHIN_MS, 25);
      expect(ms, `${label}: B still answered ${last} after ${WITHIN_MS} ms`).toBeGreaterThanOrEqual(0);
      return ms;
    }

    it("control: B serves from its caches (a change without notification goes unseen) and a notification alone refreshes them", async () => {
      // Any notification refreshes B and voids the control for that moment: a listener here
      // counts them. The instance's creation sends one, which may reach B after a first call
      // warmed it: B is warmed once that one has arrived.
      const listener = new pg.Client({ connectionString: POSTGRES });
      let foreign = 0;
      await listener.connect();
      listener.on("notification", () => void foreign++);
      await listener.query("listen platform_access_changed");
      const x = await createInstance(sys(), a.adminToken, [uniqueDomain("xp-control")]);
      const call = () => onB(INSTANCES, x.domain).call("GetInstance", { id: x.id }, x.adminPat);
      await pollUntil(async () => foreign > 0, 1_000, 10);
      await sleep(100);
      ok(await call(), "warm B");
      foreign = 0;
      try {
        // Behind the service's back: no NOTIFY.
        await a.service.store.db.updateTable("instances").set({ blocked: true }).where("id", "=", x.id).execute();
        for (let i = 0; i < 5; i++) {
          const seen = outcome(await call());
          if (foreign === 0) expect(seen, "B answers from its warm caches").toBe("ok");
          await sleep(100);
        }
      } finally {
        await listener.end();
      }
      await sql`select pg_notify('platform_access_changed', '')`.execute(a.service.store.db);
      await bFollows("ResourceExhausted", call, "after a bare notification");
      ok(await sys().call("Limit", { id: x.id, limits: { block: false } }, a.adminToken));
      await bFollows("ok", call, "after unblocking");
    });

    it("blocking on A is ResourceExhausted on B at once, on every protocol; unblocking restores B at once", async () => {
      const x = await createInstance(sys(), a.adminToken, [uniqueDomain("xp-block")]);
      const call = (protocol: Parameters<typeof at>[1] = "grpc") => onB(USERS, x.domain, protocol).call("SearchUsers", {}, x.adminPat);
      for (const protocol of ["grpc", "connect", "rest"] as const) ok(await call(protocol), `warm B over ${protocol}`);
      ok(await sys().call("Limit", { id: x.id, limits: { block: true } }, a.adminToken));
      const ms = await bFollows("ResourceExhausted", call, "block");
      for (const protocol of ["connect", "rest"] as const) expect(outcome(await call(protocol)), protocol).toBe("ResourceExhausted");
      expect(outcome(await onB(USERS, x.domain).call("SearchUsers", {})), "anonymous").toBe("ResourceExhausted");
      ok(await sys().call("Limit", { id: x.id, limits: { block: false } }, a.adminToken));
      const back = await bFollows("ok", call, "unblock");
      console.info(`B followed a block in ${ms} ms and the unblock in ${back} ms`);
    });

    it("a domain removed on A stops serving on B at once; moved to another instance, B serves that one", async () => {
      const moving = uniqueDomain("xp-moving");
      const x = await createInstance(sys(), a.adminToken, [uniqueDomain("xp-dom-x"), moving]);
      const y = await createInstance(sys(), a.adminToken, [uniqueDomain("xp-dom-y")]);
      const asX = () => onB(INSTANCES, moving).call("GetInstance", { id: x.id }, x.adminPat);
      const asY = () => onB(INSTANCES, moving).call("GetInstance", { id: y.id }, y.adminPat);
      ok(await asX(), "warm B");
      expect(outcome(await asY()), "Y's token on X's domain").toBe("Unauthenticated");
      ok(await sys().call("RemoveInstanceDomain", { id: x.id, domain: moving }, a.adminToken));
      await bFollows("NotFound", asX, "removed domain");
      const gone = await asX();
      expect(gone.ok ? "" : gone.message).toContain(`no instance serves the host "${moving}"`);
      ok(await onB(INSTANCES, x.domain).call("GetInstance", { id: x.id }, x.adminPat), "X's other domain still served by B");
      // The freed name now belongs to Y: B must not keep X for it (nor its absence).
      ok(await sys().call("AddInstanceDomain", { id: y.id, domain: { domain: moving } }, a.adminToken));
      await bFollows("ok", asY, "domain added to Y");
      expect(outcome(await asX()), "X's token on Y's new domain").toBe("Unauthenticated");
      // Making it primary and back is followed too.
      ok(await sys().call("SetPrimaryInstanceDomain", { id: y.id, domain: moving }, a.adminToken));
      ok(await asY(), "after set primary");
    });

    it("an instance deleted on A is unknown on B at once: its hosts 404", async () => {
      const x = await createInstance(sys(), a.adminToken, [uniqueDomain("xp-del"), uniqueDomain("xp-del-2")]);
      const second = (await must(sys().call("GetInstance", { id: x.id }, a.adminToken), "get")).instance.domains[1].domain as string;
      const calls = [x.domain, second].map((host) => () => onB(USERS, host).call("SearchUsers", {}, x.adminPat));
      for (const call of calls) ok(await call(), "warm B");
      ok(await sys().call("DeleteInstance", { id: x.id }, a.adminToken));
      for (const call of calls) await bFollows("NotFound", call, "deleted instance");
      // Its domain reused by a new instance on A: B serves the new one, and the old token is worthless there.
      const reborn: Created = await createInstance(sys(), a.adminToken, [x.domain]);
      await bFollows("ok", () => onB(USERS, x.domain).call("SearchUsers", {}, reborn.adminPat), "reused domain");
      expect(outcome(await calls[0]!())).toBe("Unauthenticated");
    });

    it("a user locked on A cannot authenticate on B at once", async () => {
      const x = await createInstance(sys(), a.adminToken, [uniqueDomain("xp-lock")]);
      const user = await a.createUser({ instanceId: x.id, roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
      const call = () => onB(USERS, x.domain).call("SearchUsers", {}, user.token);
      ok(await call(), "warm B");
      ok(await onA(USERS, x.domain).call("LockUser", { id: user.userId }, x.adminPat), "lock on A");
      await bFollows("Unauthenticated", call, "locked user");
      ok(await onA(USERS, x.domain).call("UnlockUser", { id: user.userId }, x.adminPat), "unlock on A");
      await bFollows("ok", call, "unlocked user");
    });

    it("a membership removed on A stops granting on B at once", async () => {
      const x = await createInstance(sys(), a.adminToken, [uniqueDomain("xp-member")]);
      const user = await a.createUser({ instanceId: x.id, roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
      const call = () => onB(INSTANCES, x.domain).call("GetInstance", { id: x.id }, user.token);
      ok(await call(), "warm B");
      ok(await onA(MEMBERS, x.domain).call("DeleteMembership", { userId: user.userId }, x.adminPat), "remove on A");
      await bFollows("PermissionDenied", call, "removed membership");
      const denied = await call();
      expect(denied.ok ? 0 : denied.code).toBe(Code.PermissionDenied);
      ok(
        await onA(MEMBERS, x.domain).call("CreateMembership", { membership: { userId: user.userId, roles: ["IAM_OWNER_VIEWER"] } }, x.adminPat),
        "grant again on A",
      );
      await bFollows("ok", call, "granted again");
      // The new role is read-only: B must not remember the old IAM_OWNER.
      expect(outcome(await onB(INSTANCES, x.domain).call("PatchInstance", { id: x.id, instance: { name: "by viewer" } }, user.token))).toBe("PermissionDenied");
    });

    it("a feature flag switched on A gates B at once, for the instance and from the system", async () => {
      const x = await createInstance(sys(), a.adminToken, [uniqueDomain("xp-flag")]);
      const call = () => onB(PlatformLanguageSettings, x.domain).call("ResolveLanguages", {}, x.adminPat);
      ok(await call(), "warm B");
      const set = (ctx: JsonObject, change: JsonObject) =>
        onA(PlatformFeatureSettings, "localhost").call("SetFeatures", { ctx, settings: { multitenancySettings: change } }, a.adminToken);
      ok(await set({ instanceId: x.id }, { set: false }), "off in the instance on A");
      await bFollows("FailedPrecondition", call, "flag off in the instance");
      ok(await set({ instanceId: x.id }, { reset: true }), "reset in the instance on A");
      await bFollows("ok", call, "flag inherited again");
      ok(await set({ system: true }, { set: false }), "off in the system on A");
      try {
        await bFollows("FailedPrecondition", call, "flag off in the system");
      } finally {
        ok(await set({ system: true }, { reset: true }), "reset in the system on A");
      }
      await bFollows("ok", call, "system default again");
    });
  },
);
