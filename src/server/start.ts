import { access, link, mkdir, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { resolveMasterKey, type Config } from "../config/config.js";
import { SecretBox } from "../crypto/encryption.js";
import { bootstrapFirstInstance } from "../domain/instance/bootstrap.js";
import type { Logger } from "../log/logger.js";
import { openStore, type Store } from "../store/database.js";
import { migrateToLatest } from "../store/migrate.js";
import { createApp } from "./app.js";
import { listen } from "./listener.js";

export interface Service {
  port: number;
  store: Store;
  app: ReturnType<typeof createApp>;
  close(): Promise<void>;
}

/** Everything `npm start` does after reading the configuration. */
export async function startService(config: Config, logger: Logger, opts: { migrate?: boolean } = {}): Promise<Service> {
  const box = new SecretBox(await resolveMasterKey(config));
  const store = await openStore(config.database, (error) =>
    logger.warn({ err: error }, "an idle database connection failed; the pool replaces it"),
  );
  try {
    if (opts.migrate !== false) {
      const applied = await migrateToLatest(store.db);
      if (applied.length > 0) logger.info({ migrations: applied }, "database migrated");
    }
    await bootstrap(config, store, logger);
    const app = createApp({ config, store, logger, box });
    const listener = await listen(app.handle, { port: config.port, host: config.bind, tls: config.tls });
    logger.info({ port: listener.port, database: store.kind, url: config.externalUrl.origin }, "serving");
    return {
      port: listener.port,
      store,
      app,
      async close() {
        app.shutdown();
        await listener.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * The admin token exists only in the bootstrap transaction and in the file, so the file is
 * written before the commit (under a temporary name) and moved into place after it: a
 * failed write rolls the bootstrap back, and no crash leaves a database whose admin
 * token nobody has.
 */
async function bootstrap(config: Config, store: Store, logger: Logger): Promise<void> {
  const patPath = config.adminPatPath;
  const pending = `${patPath}.${process.pid}.tmp`;
  let result;
  try {
    result = await bootstrapFirstInstance(store.db, config.externalUrl.hostname, {
      async beforeCreate() {
        const exists = await access(patPath).then(() => true, () => false);
        if (exists) throw new Error(`${patPath} exists but the database is empty: move the old file away and start again`);
      },
      async beforeCommit(token) {
        await mkdir(dirname(patPath), { recursive: true });
        await writeFile(pending, token + "\n", { mode: 0o600, flag: "wx" });
      },
    });
  } catch (error) {
    await rm(pending, { force: true });
    throw error;
  }
  if (!result) return;
  // link fails if the target exists: the token file is never overwritten. On failure the
  // token stays in the pending file, which the error names.
  await link(pending, patPath).catch((error: Error) => {
    throw new Error(`bootstrapped, but could not write ${patPath} (${error.message}): the admin token is in ${pending}`);
  });
  await rm(pending);
  logger.info({ instanceId: result.instanceId, domain: config.externalUrl.hostname, patPath }, "bootstrapped the first instance");
}
