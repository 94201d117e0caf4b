/**
 * A database reading for a scrape, or undefined when it failed or took longer than `ms`:
 * a stalled database must not hang the metrics endpoint.
 */
export async function readWithin<T>(ms: number, read: () => Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([read().catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
}
