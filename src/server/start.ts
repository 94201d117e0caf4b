import { access, link, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Config } from "../config/config.js";
import { resolveMasterKey } from "../config/master-key.js";
import { SecretBox } from "../crypto/encryption.js";
import { bootstrapFirstInstance, HUMAN_ADMIN_USERNAME } from "../domain/instance/bootstrap.js";
import { provisionMissingConsoleApps } from "../domain/instance/console-app.js";
import { verificationSettings } from "./verification-settings.js";
import type { Logger } from "../log/logger.js";
import { openStore, type Store } from "../store/database.js";
import { openDataDir } from "../store/data-dir.js";
import { migrateToLatest } from "../store/migrate.js";
import { startTelemetry, type Telemetry } from "../telemetry/index.js";
import { startPayloadSweeper } from "../oidc/adapters/sweeper.js";
import { DeliveryMetrics } from "../engines/actions/delivery-metrics.js";
import { startDeliveryWorker } from "../engines/actions/delivery-worker.js";
import { installOutbox } from "../engines/actions/outbox.js";
import { sweepSignInEvents } from "../domain/audit/retention.js";
import { startSweeper } from "../store/sweeper.js";
import { startDeliveryRetention } from "../engines/actions/delivery-retention.js";
import { NotificationMetrics } from "../engines/notifications/outbox/metrics.js";
import { InstanceLinks } from "../engines/notifications/outbox/links.js";
import { startNotificationSweep } from "../engines/notifications/outbox/sweep.js";
import { startNotificationWorker } from "../engines/notifications/outbox/worker.js";
import { createApp } from "./app.js";
import { listen } from "./listener.js";
import { ACCESS_CHANNEL, AccessEpoch } from "../cache/access-epoch.js";
import { listenForChanges, type ChangeListener } from "../store/pg/change-listener.js";

export interface Service {
  port: number;
  store: Store;
  app: ReturnType<typeof createApp>;
  /** Where GET /metrics answers; undefined when PLATFORM_METRICS_BIND is empty (and in cluster workers). */
  metricsPort: number | undefined;
  /** The process's access epoch: `reliable` once the connection listening for access changes stands. */
  access: AccessEpoch;
  telemetry: Telemetry;
  close(): Promise<void>;
}

/** Everything `npm start` does after reading the configuration. */
export async function startService(config: Config, logger: Logger, opts: { migrate?: boolean } = {}): Promise<Service> {
  const dataDir = config.database.kind === "pglite" && config.database.dataDir ? await openDataDir(config.dataDir) : undefined;
  let store: Store | undefined;
  let telemetry: Telemetry | undefined;
  let changes: ChangeListener | undefined;
  try {
    const box = new SecretBox(await resolveMasterKey(config));
    const observed = (telemetry = await startTelemetry(config));
    const opened = await openStore(
      config.database,
      config.db,
      (error) => logger.warn({ err: error }, "a database connection failed; the pool replaces it"),
      observed.queryObserver,
    );
    store = opened;
    observed.metrics.watch({ store: opened });
    if (opts.migrate !== false) {
      const applied = await opened.withMaintenance(migrateToLatest);
      if (applied.length > 0) logger.info({ migrations: applied }, "database migrated");
    }
    installOutbox();
    await bootstrap(config, opened, logger, box);
    const provisioned = await opened.db.transaction().execute((tx) => provisionMissingConsoleApps(tx, "system"));
    if (provisioned > 0) logger.info({ instances: provisioned }, "gave instances created before the console its application");
    const access = new AccessEpoch();
    changes = watchAccessChanges(config, access, logger);
    const app = createApp({ config, store: opened, logger, box, access, telemetry: observed });
    const sweeper = startPayloadSweeper(opened, logger, config.oidc.sweepIntervalMs);
    const listener = await listen(app.handle, {
      port: config.port,
      host: config.bind,
      tls: config.tls,
      limits: config.http,
      onAcceptError: (error) => logger.warn({ err: error }, "accepting a connection failed"),
    });
    observed.metrics.watch({ connections: () => listener.stats(), watchStreams: () => app.watchStreams.open });
    const metrics = await observed.serve(logger).catch(async (error: unknown) => {
      await listener.close(0);
      throw error;
    });
    // Started last: nothing after it can fail and leave it running.
    const deliveries = startDeliveryWorker({
      store: opened,
      flags: app.flags,
      outbound: app.outbound,
      box,
      signingKeyGraceMs: config.actions.signingKeyGraceMs,
      settings: config.actions.delivery,
      logger,
      metrics: new DeliveryMetrics(observed.metrics.registry, opened.db, config.healthTimeoutMs),
    });
    const retention = startDeliveryRetention(opened, logger, config.actions.delivery);
    const messages = startNotificationWorker({
      store: opened,
      box,
      sender: app.notifications,
      links: new InstanceLinks(config.externalUrl, Boolean(config.tls)),
      settings: notificationWorkerSettings(config),
      logger,
      metrics: new NotificationMetrics(observed.metrics.registry, opened.db, config.healthTimeoutMs),
    });
    const messageSweep = startNotificationSweep(opened, logger, config.notifications);
    const signInSweep = startSweeper({
      intervalMs: config.signInRetention.sweepIntervalMs,
      logger,
      failure: "removing old sign-in events failed; the next run tries again",
      sweepBatch: (limit) => sweepSignInEvents(opened.db, config.signInRetention.retentionMs, limit),
    });
    logger.info(
      { port: listener.port, database: opened.kind, url: config.externalUrl.origin, metricsPort: metrics?.port, tracing: Boolean(observed.tracing) },
      "serving",
    );
    return {
      port: listener.port,
      store: opened,
      app,
      metricsPort: metrics?.port,
      access,
      telemetry: observed,
      async close() {
        app.shutdown();
        await listener.close();
        // No request is left to record a sign-in: every open window is summed up and written.
        await app.signIns.close();
        // Calls in flight finish (bounded by their targets' timeouts) and write their results.
        await deliveries.stop();
        await messages.stop();
        app.notifications.close();
        await retention.stop();
        await messageSweep.stop();
        await signInSweep.stop();
        await sweeper.stop();
        await metrics?.close();
        await changes?.close();
        await opened.close();
        // Last: the spans of the final requests and statements are flushed to the collector.
        await observed.close();
        await dataDir?.release();
      },
    };
  } catch (error) {
    await changes?.close();
    await store?.close();
    await telemetry?.close();
    await dataDir?.release();
    throw error;
  }
}

/** A message waiting for a provider looks again this often (at once when one is activated). */
const NO_PROVIDER_WAIT_MS = 60_000;

/** A claim outlasts the longest send: the SMTP or outbound timeout, with room for rendering and writing the result. */
function notificationWorkerSettings(config: Config) {
  const longestSendMs = Math.max(config.notificationProviders.smtpTimeoutMs, config.outbound.timeoutMs);
  return { ...config.notifications, leaseS: Math.ceil(longestSendMs / 1000) + 30, noProviderWaitMs: NO_PROVIDER_WAIT_MS };
}

/**
 * The admin token exists only in the bootstrap transaction and in the file, so the file is
 * written before the commit (under a temporary name) and moved into place after it: a
 * failed write rolls the bootstrap back, and no crash leaves a database whose admin
 * token nobody has.
 */
async function bootstrap(config: Config, store: Store, logger: Logger, box: SecretBox): Promise<void> {
  const patPath = config.adminPatPath;
  const invitePath = config.adminInvitePath;
  const pending = `${patPath}.${process.pid}.tmp`;
  const pendingInvite = `${invitePath}.${process.pid}.tmp`;
  let result;
  let inviteUrl = "";
  try {
    result = await bootstrapFirstInstance(store.db, config.externalUrl.hostname, {
      patExpiresAt: new Date(Date.now() + config.bootstrapPatExpiresMs),
      person: { email: config.adminEmail, invites: verificationSettings(config, box) },
      async beforeCreate() {
        const exists = await access(patPath).then(
          () => true,
          () => false,
        );
        if (exists) throw new Error(`${patPath} exists but the database is empty: move the old file away and start again`);
      },
      async beforeCommit(token, invite) {
        inviteUrl = new URL(invite, config.externalUrl).href;
        await mkdir(dirname(patPath), { recursive: true });
        await mkdir(dirname(invitePath), { recursive: true });
        await writeFile(pending, token + "\n", { mode: 0o600, flag: "wx" });
        await writeFile(pendingInvite, inviteUrl + "\n", { mode: 0o600, flag: "wx" });
      },
    });
  } catch (error) {
    await rm(pending, { force: true });
    await rm(pendingInvite, { force: true });
    throw error;
  }
  if (!result) return;
  // link fails if the target exists: the token file is never overwritten. On failure the
  // token stays in the pending file, which the error names. An invitation left from an
  // earlier database is void (its code is that database's): the new one replaces it.
  await link(pending, patPath).catch((error: Error) => {
    throw new Error(`bootstrapped, but could not write ${patPath} (${error.message}): the admin token is in ${pending}`);
  });
  await rm(pending);
  await rename(pendingInvite, invitePath).catch((error: Error) => {
    throw new Error(`bootstrapped, but could not write ${invitePath} (${error.message}): the administrator's invitation is in ${pendingInvite}`);
  });
  logger.info({ instanceId: result.instanceId, domain: config.externalUrl.hostname, patPath, invitePath }, "bootstrapped the first instance");
  // The person's way in, where whoever started the service looks first.
  logger.info(
    { user: HUMAN_ADMIN_USERNAME, email: config.adminEmail },
    `the first administrator signs in to the console after choosing a password at ${inviteUrl} (also in ${invitePath})`,
  );
}

/**
 * On PostgreSQL, other processes may change access: their NOTIFYs advance this process's
 * epoch, and until the listening connection stands, caches are not trusted. PGlite serves
 * one process (its data directory is locked), which advances the epoch itself.
 */
function watchAccessChanges(config: Config, access: AccessEpoch, logger: Logger): ChangeListener | undefined {
  if (config.database.kind !== "postgres") return undefined;
  access.reliable = false;
  return listenForChanges(
    config.database.url,
    ACCESS_CHANNEL,
    {
      onNotify: () => access.advance(),
      onListening: (listening) => {
        if (listening !== access.reliable)
          logger[listening ? "info" : "warn"](
            { listening },
            listening ? "listening for access changes" : "not listening for access changes: caches are bypassed until it is back",
          );
        access.reliable = listening;
      },
      onError: (error) => logger.warn({ err: error }, "the connection listening for access changes failed"),
    },
    config.db.connectTimeoutMs,
  );
}
