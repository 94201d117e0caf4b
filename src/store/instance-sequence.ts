import { sql } from "kysely";
import type { Tx } from "./db.js";

/** The instance id of what the system context owns: no instance. */
export const SYSTEM_STREAM = "";

/**
 * The sequence numbering one instance's events. A sequence rather than a counter row:
 * concurrent writers of an instance never wait for each other to take a number.
 */
export function instanceSequence(instanceId: string): string {
  // The system's events (settings and providers defined above every instance).
  if (instanceId === SYSTEM_STREAM) return "events_pos_system";
  if (!/^[0-9a-f-]{1,40}$/.test(instanceId)) throw new Error(`not an instance id: ${instanceId}`);
  return `events_pos_${instanceId.replaceAll("-", "")}`;
}

/** Part of creating an instance, before its first event. */
export async function createInstanceSequence(tx: Tx, instanceId: string): Promise<void> {
  await sql`create sequence ${sql.id(instanceSequence(instanceId))}`.execute(tx);
}
