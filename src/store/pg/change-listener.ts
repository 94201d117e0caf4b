import pg from "pg";

export interface ChangeListener {
  close(): Promise<void>;
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;

/**
 * Keeps one connection LISTENing on a channel, outside the pool (a pooled connection would be
 * handed to requests). Reports whether it is listening: while it is not, notifications can be
 * missed, so the caller must not trust its caches; on every (re)connection `onNotify` runs
 * once, as whatever happened meanwhile was not heard. Reconnects with a growing delay.
 */
export function listenForChanges(
  url: string,
  channel: string,
  handlers: { onNotify(): void; onListening(listening: boolean): void; onError(error: Error): void },
  connectTimeoutMs: number,
): ChangeListener {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delay = RETRY_MIN_MS;

  const lost = (error?: Error) => {
    if (error) handlers.onError(error);
    handlers.onListening(false);
    client?.removeAllListeners();
    client?.on("error", () => {});
    void client?.end().catch(() => {});
    client = undefined;
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, delay);
    retry.unref();
    delay = Math.min(delay * 2, RETRY_MAX_MS);
  };

  const connect = async () => {
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, keepAlive: true });
    client = next;
    next.on("error", (error) => lost(error));
    next.on("end", () => client === next && lost());
    next.on("notification", (message) => message.channel === channel && handlers.onNotify());
    try {
      await next.connect();
      await next.query(`listen ${pg.escapeIdentifier(channel)}`);
      if (closed || client !== next) return;
      delay = RETRY_MIN_MS;
      handlers.onListening(true);
      handlers.onNotify();
    } catch (error) {
      if (client === next) lost(error as Error);
    }
  };

  void connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      const current = client;
      client = undefined;
      current?.removeAllListeners();
      current?.on("error", () => {});
      await current?.end().catch(() => {});
    },
  };
}
