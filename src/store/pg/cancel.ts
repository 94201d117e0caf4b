import pg from "pg";

/** What pg keeps of a connected client that a cancel request needs (pg sets these on connect). */
interface Backend {
  processID?: number;
  secretKey?: number;
  host?: string;
  port?: number;
}

/**
 * A statement whose request was aborted gets this long to finish by itself before it is
 * cancelled: most do (a lookup takes a millisecond), and then the connection stays usable
 * instead of being cancelled, discarded and reopened. Pooled and shared connections alike.
 */
export const CANCEL_GRACE_MS = 50;

/** A cancel request that gets no answer (a dead network) is given up after this. */
const CANCEL_TIMEOUT_MS = 5_000;

/**
 * Sends PostgreSQL's CancelRequest for the statement running on `client`'s backend, on a
 * short connection of its own (the protocol's way: no pooled connection, no authentication).
 * pg's own Client#cancel goes through a deprecated accessor, so its Connection is used
 * directly. Best effort: the caller discards the connection whatever happens.
 */
export function cancelStatement(client: pg.PoolClient): void {
  const { processID, secretKey, host, port } = client as unknown as Backend;
  if (processID === undefined || secretKey === undefined || port === undefined) return;
  const Connection = (pg as unknown as { Connection: new () => PgProtocolConnection }).Connection;
  const connection = new Connection();
  const timer = setTimeout(() => connection.stream?.destroy(), CANCEL_TIMEOUT_MS);
  timer.unref();
  connection.on("error", () => clearTimeout(timer));
  connection.on("end", () => clearTimeout(timer));
  connection.on("connect", () => connection.cancel(processID, secretKey));
  // A host starting with "/" is a Unix socket directory, as pg (and libpq) treat it.
  if (host?.startsWith("/")) connection.connect(`${host}/.s.PGSQL.${port}`);
  else connection.connect(port, host ?? "localhost");
}

interface PgProtocolConnection {
  stream?: { destroy(): void };
  on(event: string, listener: (...args: unknown[]) => void): void;
  connect(portOrPath: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
}
