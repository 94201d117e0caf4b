import pg from "pg";
import { processCpuMs } from "../processes.js";

/**
 * The PostgreSQL backends serving a database (the service's pool: open for the whole run once
 * warm). The server may be shared with other clients: only these backends are counted.
 */
export async function backendPids(serverUrl: string, database: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>("select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [database]);
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

/**
 * CPU time (user + system) so far of the given PostgreSQL backends, in ms, from /proc;
 * undefined where there is none. A backend that exits between two readings takes its time
 * with it (then the difference is not trustworthy: the caller drops negative ones).
 */
export function backendsCpuMs(pids: readonly number[]): number | undefined {
  let total = 0;
  for (const pid of pids) {
    const ms = processCpuMs(pid);
    if (ms === undefined) return undefined;
    total += ms;
  }
  return total;
}
