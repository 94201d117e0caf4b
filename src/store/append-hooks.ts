import { sql, type Expression } from "kysely";
import type { Db, Tx } from "./db.js";

/** An event as it was inserted, as append hooks see it. */
export interface AppendedEvent {
  aggregateType: string;
  aggregateId: string;
  position: number;
  sequence: number;
  type: string;
  createdAt: Date;
}

/**
 * Work that must commit or roll back with the events it follows, run in the appending
 * transaction after each insert. The layers above register theirs (the action engine's
 * outbox, actions/outbox.ts), so that the store knows of none of them.
 *
 * `read` is what the hook needs to know, as a scalar subquery that the insert's own
 * statement returns: the read costs no round trip of its own (every write pays it), and
 * PostgreSQL evaluates an uncorrelated subquery once per statement (an init plan), however
 * many rows it inserts. It sees what the insert's statement sees. A read that finds nothing
 * is null, and means the hook has nothing to do for these events: `run` is not called, and
 * an append that does not wait for its insert's answer (queueEvents) may go without it.
 */
export interface AppendHook<T = unknown> {
  read?: (db: Db, instanceId: string) => Expression<T>;
  run(tx: Tx, instanceId: string, events: readonly AppendedEvent[], read: T): Promise<void>;
}

/** In their order of registration: each hook's read is the insert's column `hook_<index>`. */
const appendHooks: AppendHook[] = [];

/** How many hooks are registered: the prepared appends (append-statements.ts) are built again when it changes. */
export function hookCount(): number {
  return appendHooks.length;
}

/** Registers a hook for every append of this process (once, however often it is called). */
export function onAppend<T>(hook: AppendHook<T>): void {
  if (appendHooks.includes(hook as AppendHook)) return;
  appendHooks.push(hook as AppendHook);
}

/** The hooks' reads as columns of the insert's answer, `hook_<i>` in the hooks' order. */
export function hookReads(db: Db, instanceId: string) {
  return appendHooks.flatMap((hook, i) => (hook.read ? [sql`${hook.read(db, instanceId)}`.as(`hook_${i}`)] : []));
}

/** Whether every hook reads what it needs: otherwise its work cannot be ruled out, and no append is queued. */
export function everyHookReads(): boolean {
  return appendHooks.every((hook) => hook.read);
}

/** Whether every hook's read finds nothing (only while every hook has a read: everyHookReads). */
export function hooksIdle(db: Db, instanceId: string) {
  const idle = appendHooks.map((hook) => sql`${hook.read!(db, instanceId)} is null`);
  return idle.length > 0 ? sql.join(idle, sql` and `) : sql`true`;
}

/**
 * Runs the hooks whose reads (the insert's `hook_<i>` columns of its first row) found work.
 * Whether none did: the instance's appends may be queued again.
 */
export async function runHooks(tx: Tx, instanceId: string, events: readonly AppendedEvent[], reads: Record<string, unknown> | undefined): Promise<boolean> {
  let idle = true;
  for (const [i, hook] of appendHooks.entries()) {
    const read = hook.read ? reads?.[`hook_${i}`] : undefined;
    if (hook.read && read === null) continue;
    idle = false;
    await hook.run(tx, instanceId, events, read);
  }
  return idle;
}
