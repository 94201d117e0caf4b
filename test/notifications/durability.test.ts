import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformNotifications } from "../../gen/platform/resources/notification/v3alpha/notification_service_pb.js";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { freePort, spawnPeer, spawnService, waitReady, type ChildService } from "../support/child-service.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/database.js";
import type { Msg } from "../support/results.js";
import { serviceClient, type Client } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";
import { until } from "../support/until.js";
import { testCertificates, TestSmtpServer, type Certificates } from "../notification-providers/fakes.js";
import { PASSWORD, smtpSettings } from "../notification-providers/requests.js";
import { humanUser, uniqueName } from "../users/helpers.js";

/**
 * Messages are never lost and, without a crash, never sent twice (issue 19, "Durability"): a
 * relay that refuses connections or stalls and comes back, a process killed with messages
 * pending and claimed, two processes draining one outbox. Every count is taken where the
 * mail arrives: the real SMTP server of the tests, per recipient.
 */

let dir: string;
let certificates: Certificates;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "durability-"));
  certificates = await testCertificates(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const addressOf = (username: string) => `${username.toLowerCase()}@mail.example`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many copies of a message each address got; `settleMs` first, so that a late duplicate would be counted. */
async function copiesPerAddress(smtp: TestSmtpServer, addresses: string[], settleMs: number): Promise<number[]> {
  await until(`a message to each of ${addresses.length} addresses`, () => addresses.every((a) => smtp.delivered.some((d) => d.to.includes(a))), 60_000);
  await sleep(settleMs);
  return addresses.map((a) => smtp.delivered.filter((d) => d.to.includes(a)).length);
}

/** Creates humans with an email (one message each), `inParallel` at a time; returns their usernames and ids. */
async function createPeople(users: Client, prefix: string, count: number, inParallel = 8): Promise<{ name: string; id: string }[]> {
  const made: { name: string; id: string }[] = [];
  for (let start = 0; start < count; start += inParallel) {
    const batch = Array.from({ length: Math.min(inParallel, count - start) }, () => uniqueName(prefix));
    made.push(
      ...(await Promise.all(batch.map(async (name) => ({ name, id: (await users.ok("CreateUser", { user: humanUser(name) })).details.id as string })))),
    );
  }
  return made;
}

/** The log's rows of these users' messages. */
async function logOf(log: Client, ids: string[]): Promise<Msg[]> {
  const rows = await Promise.all(ids.map(async (userId) => ((await log.ok("SearchNotifications", { filters: [{ user: { userId } }] })).result ?? []) as Msg[]));
  return rows.flat();
}

describe.each(DATABASE_KINDS)("messages while the SMTP relay is down or stalls (%s)", (kind) => {
  let server: TestServer;
  const smtps: TestSmtpServer[] = [];
  const proxies: TcpProxy[] = [];
  const api = () => ({
    users: serviceClient(PlatformUsers, server.baseUrl, server.adminToken),
    log: serviceClient(PlatformNotifications, server.baseUrl, server.adminToken),
    providers: serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken),
  });
  async function activate(port: number) {
    const id = (await api().providers.ok("CreateSMTPProvider", { provider: { description: `relay ${port}`, smtp: smtpSettings(port) } })).details.id;
    await api().providers.ok("ActivateSMTPProvider", { id });
  }

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PLATFORM_SMTP_CA_PATH: certificates.caPath,
      PLATFORM_NOTIFICATION_POLL_INTERVAL: "50ms",
      PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
      // A stalled relay costs a send this long; every step of a working one takes milliseconds.
      PLATFORM_SMTP_TIMEOUT: "2s",
      // As many sends at once as the SMTP pool has connections (PLATFORM_SMTP_MAX_CONNECTIONS):
      // none waits for a connection, so a relay that comes back never meets a send whose
      // time is almost up (one that reached the relay just as it was given up counts as
      // failed and is sent again: SMTP cannot tell).
      PLATFORM_NOTIFICATION_CONCURRENCY: "3",
    });
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all(proxies.map((p) => p.close()));
    await Promise.all(smtps.map((s) => s.close()));
  });

  it("retries with growing pauses while connections are refused, and sends each message once when the relay is back", async () => {
    // The relay's port, with nothing listening on it yet: every connection is refused.
    const port = await freePort();
    await activate(port);
    const written = Date.now();
    const people = await createPeople(api().users, "down", 6);
    const ids = people.map((p) => p.id);

    const refused = await until("three refused attempts of each message", async () => {
      const rows = await logOf(api().log, ids);
      return rows.length === ids.length && rows.every((r) => r.attempts >= 3) && rows;
    });
    for (const row of refused) {
      expect(row.status).toBe("NOTIFICATION_STATUS_PENDING");
      expect(row.lastError).toMatch(/ECONNREFUSED/);
      expect(row.nextAttemptDate).toBeDefined();
      // The worker polls every 50 ms: without backoff there would be dozens of attempts by now.
      expect(row.attempts).toBeLessThanOrEqual(5);
    }
    // Three attempts take two pauses, of at least 0.5 s and 1 s (1 s and 2 s, halved at most by jitter).
    expect(Date.now() - written).toBeGreaterThanOrEqual(1500);

    const smtp = new TestSmtpServer({ certificates, users: { mailer: PASSWORD } });
    smtps.push(smtp);
    await smtp.start(port);
    expect(
      await copiesPerAddress(
        smtp,
        people.map((p) => addressOf(p.name)),
        1000,
      ),
    ).toEqual(people.map(() => 1));
    const sent = await until("the log says sent", async () => {
      const rows = await logOf(api().log, ids);
      return rows.every((r) => r.status === "NOTIFICATION_STATUS_SENT") && rows;
    });
    // The attempt that went through may be the third: an attempt counts from its claim, and the relay may come up while it connects.
    for (const row of sent) expect(row.attempts).toBeGreaterThanOrEqual(3);
  }, 30_000);

  /** A real SMTP server behind a proxy that, for now, swallows everything: a relay that accepts connections and says nothing. */
  async function stalledRelay(): Promise<{ smtp: TestSmtpServer; proxy: TcpProxy }> {
    const smtp = new TestSmtpServer({ certificates, users: { mailer: PASSWORD } });
    smtps.push(smtp);
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: await smtp.start() });
    proxies.push(proxy);
    proxy.mode = "swallow";
    await activate(proxy.port);
    return { smtp, proxy };
  }
  /** The relay answers again; the connections it stalled are dropped. */
  function recover(proxy: TcpProxy) {
    proxy.mode = "pass";
    proxy.cut();
  }

  it("never makes a send it gave up on, though it waited for one of the pool's connections when the relay answers again", async () => {
    const { smtp, proxy } = await stalledRelay();
    const sender = server.service.app.notifications;
    const email = (to: string) => ({ to, subject: "Durability", text: "A message.", html: "<p>A message.</p>" });
    // Six at once over three pooled connections: three hang on a connection, three wait in the pool's queue.
    const addresses = Array.from({ length: 6 }, (_, i) => `given-up-${i}@mail.example`);
    const results = await Promise.allSettled(addresses.map((to) => sender.sendEmail(server.instanceId, email(to))));
    // Each fails as one to retry: by the deadline, or (a queued one, under load) by the pool handing it a connection the deadline of another just closed.
    for (const r of results)
      expect(r).toMatchObject({
        status: "rejected",
        reason: { message: expect.stringMatching(/^sending the email took longer than 2000 ms$|^SMTP E[A-Z]+: /), retryable: true },
      });
    expect(results.filter((r) => r.status === "rejected" && /took longer/.test(r.reason.message)).length).toBeGreaterThanOrEqual(3);

    recover(proxy);
    // What still waited in the pool would take a fresh connection and go out now (it did, within a second).
    await sleep(2000);
    expect(smtp.delivered.filter((d) => addresses.some((a) => d.to.includes(a)))).toEqual([]);
    await sender.sendEmail(server.instanceId, email("after@mail.example"));
    expect(smtp.delivered.map((d) => d.to)).toEqual([["after@mail.example"]]);
  }, 30_000);

  it("sends each message once after a relay that accepted connections and said nothing comes back", async () => {
    const { smtp, proxy } = await stalledRelay();
    const people = await createPeople(api().users, "stall", 6);
    const ids = people.map((p) => p.id);
    // An attempt fails by its deadline, or (one that waited in the SMTP pool, under load) by
    // meeting a connection another's deadline just closed: the relay's silence either way.
    let rows: Msg[] = [];
    await until("a failed attempt of each message", async () => {
      rows = await logOf(api().log, ids);
      return rows.length === ids.length && rows.every((r) => r.attempts >= 1 && /took longer than|SMTP E[A-Z]+: /.test(r.lastError ?? ""));
    }).catch((error: Error) => {
      throw new Error(`${error.message}; the log: ${JSON.stringify(rows.map((r) => ({ attempts: r.attempts, lastError: r.lastError })))}`);
    });
    expect(rows.some((r) => /took longer than/.test(r.lastError ?? ""))).toBe(true);
    expect(smtp.delivered).toHaveLength(0);

    recover(proxy);
    expect(
      await copiesPerAddress(
        smtp,
        people.map((p) => addressOf(p.name)),
        3000,
      ),
    ).toEqual(people.map(() => 1));
    await until("the log says sent", async () => (await logOf(api().log, ids)).every((r) => r.status === "NOTIFICATION_STATUS_SENT"));
  }, 30_000);
});

/** A relay that accepts connections and never says a word: each send hangs until its timeout. */
async function silentRelay(): Promise<{ port: number; server: net.Server; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("messages survive kill -9", () => {
  // Both database kinds at once: most of each test is waiting for a dead process's lease.
  it.concurrent.each(DATABASE_KINDS)(
    "sends every message once after a restart: pending ones at once, those the killed process held when its lease runs out (%s)",
    async (kind) => {
      const smtp = new TestSmtpServer({ certificates, users: { mailer: PASSWORD } });
      const relay = await silentRelay();
      const dataDir = await mkdtemp(join(tmpdir(), "platform-messages-"));
      const database = await createTestDatabase(kind);
      const running: ChildService[] = [];
      try {
        const smtpPort = await smtp.start();
        const env = (relayPort: number, smtpTimeout: string) => ({
          PLATFORM_DATA_DIR: dataDir,
          PLATFORM_MASTERKEY: "0123456789abcdef0123456789abcdef",
          PLATFORM_EXTERNAL_URL: "http://localhost",
          PLATFORM_SMTP_URL: `smtp://mailer:${encodeURIComponent(PASSWORD)}@localhost:${relayPort}`,
          PLATFORM_SMTP_FROM: "Platform <noreply@platform.example>",
          PLATFORM_SMTP_CA_PATH: certificates.caPath,
          PLATFORM_SMTP_TIMEOUT: smtpTimeout,
          PLATFORM_OUTBOUND_TIMEOUT: "1s",
          PLATFORM_NOTIFICATION_POLL_INTERVAL: "50ms",
          // Fewer sends at once than the pool's connections: each claimed message opens its own.
          PLATFORM_NOTIFICATION_CONCURRENCY: "2",
          ...(kind === "postgres" && { DATABASE_URL: (database.target as { url: string }).url }),
        });
        // The first process's lease is the shortest there is: its longest send (1 s) and 30 s.
        const first = await spawnService(env(relay.port, "1s"));
        running.push(first);
        await waitReady(first);
        const token = (await readFile(join(dataDir, "admin.pat"), "utf8")).trim();
        const people = await createPeople(serviceClient(PlatformUsers, first.baseUrl, token), "kill", 10, 5);

        // A send starts right after its message is claimed: killed then, the process holds a claim.
        await once(relay.server, "connection");
        first.process.kill("SIGKILL");
        await first.exited;
        const killedAt = Date.now();
        expect(smtp.delivered).toHaveLength(0);

        const second = await spawnService(env(smtpPort, "30s"));
        running.push(second);
        await waitReady(second);
        const readyAt = Date.now();
        expect(
          await copiesPerAddress(
            smtp,
            people.map((p) => addressOf(p.name)),
            1000,
          ),
        ).toEqual(people.map(() => 1));
        const times = smtp.delivered.map((d) => d.at).sort((a, b) => a - b);
        expect(times[0]! - readyAt, "pending messages go out at once").toBeLessThan(10_000);
        expect(times.at(-1)! - killedAt, "a claimed one waits for its lease (31 s from its claim)").toBeGreaterThanOrEqual(29_000);

        const log = serviceClient(PlatformNotifications, second.baseUrl, token);
        const rows = await until("the log says sent", async () => {
          const found = await logOf(
            log,
            people.map((p) => p.id),
          );
          return found.every((r) => r.status === "NOTIFICATION_STATUS_SENT") && found;
        });
        expect(rows).toHaveLength(people.length);
        await second.stop();
      } finally {
        await Promise.all(running.map((s) => s.stop("SIGKILL")));
        await relay.close();
        await smtp.close();
        await database.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
    // Mostly waiting: two start-ups (migrations on a fresh PGlite) and the 31 s lease. 40 s
    // alone; past 90 s once with the whole suite beside it on a slow machine.
    180_000,
  );
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("two processes share the outbox of messages (postgres only; PGlite serves one process)", () => {
  let a: TestServer;
  let b: Awaited<ReturnType<typeof spawnPeer>>;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    // A relay slow enough (20 ms a message) that both processes find due messages.
    smtp = new TestSmtpServer({ certificates, users: { mailer: PASSWORD }, acceptDelayMs: 20 });
    const port = await smtp.start();
    const env = {
      PLATFORM_SMTP_CA_PATH: certificates.caPath,
      PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
      PLATFORM_NOTIFICATION_POLL_INTERVAL: "20ms",
      PLATFORM_NOTIFICATION_CONCURRENCY: "4",
    };
    a = await startTestServer("postgres", env);
    b = await spawnPeer(a.config.database as { url: string }, env);
    const providers = serviceClient(PlatformSMTPProviders, a.baseUrl, a.adminToken);
    const id = (await providers.ok("CreateSMTPProvider", { provider: { description: "shared relay", smtp: smtpSettings(port) } })).details.id;
    await providers.ok("ActivateSMTPProvider", { id });
  }, 120_000);
  afterAll(async () => {
    await b?.cleanup();
    await a?.close();
    await smtp?.close();
  });

  it("sends each message once, both processes taking part", async () => {
    const people = await createPeople(serviceClient(PlatformUsers, a.baseUrl, a.adminToken), "pair", 40);
    expect(
      await copiesPerAddress(
        smtp,
        people.map((p) => addressOf(p.name)),
        1000,
      ),
    ).toEqual(people.map(() => 1));
    const rows = await a.service.store.db
      .selectFrom("notifications")
      .select(["status", "attempts"])
      .where(
        "user_id",
        "in",
        people.map((p) => p.id),
      )
      .execute();
    expect(rows).toHaveLength(people.length);
    expect(rows.every((r) => r.status === "sent" && Number(r.attempts) === 1)).toBe(true);
    // The in-process one sent some, not all (its own counter says).
    const counter = await a.service.telemetry.metrics.registry.getSingleMetric("platform_notifications_total")!.get();
    const byA = counter.values.find((v) => v.labels.channel === "email" && v.labels.result === "sent")?.value ?? 0;
    expect(byA).toBeGreaterThan(0);
    expect(byA).toBeLessThan(people.length);
  }, 60_000);
});
