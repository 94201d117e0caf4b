/**
 * Instances where a queued append (queueEvents) found an append hook with work: their
 * appends wait for the insert's answer, until one of them finds the hooks idle again. At
 * most one entry per instance with such work (event executions), of this process.
 */
const busyInstances = new Set<string>();

/** The SQLSTATE of the refusal of a queued append whose hooks have work (migration 0027); ours, as P0404 is. */
const HOOKS_BUSY = "P0100";

/**
 * Whether a write failed because an append it queued (queueEvents) met append hooks with
 * work. The failed write left nothing; run again, it appends the slow way, which runs the
 * hooks (store/database.ts retries it once, at once).
 */
export function appendRefused(error: unknown): boolean {
  const { code, detail } = (error ?? {}) as { code?: unknown; detail?: unknown };
  if (code !== HOOKS_BUSY || typeof detail !== "string") return false;
  busyInstances.add(detail);
  return true;
}

/** Whether an instance's appends must wait for their answers, its hooks having had work. */
export function hooksBusy(instanceId: string): boolean {
  return busyInstances.has(instanceId);
}

/** Drops what this process remembers of an instance: at its removal, and when its hooks are idle again. */
export function forgetInstance(instanceId: string): void {
  busyInstances.delete(instanceId);
}
