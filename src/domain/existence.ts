import type { Tx } from "../store/eventstore.js";
import { notFound } from "./errors.js";

/** Commands that refer to another resource check it exists in the same instance. */
export async function requireExisting(tx: Tx, table: "users" | "orgs", instanceId: string, id: string): Promise<void> {
  const row = await tx
    .selectFrom(table)
    .select("id")
    .where("instance_id", "=", instanceId)
    .where("id", "=", id)
    .executeTakeFirst();
  if (!row) throw notFound(`${table === "users" ? "user" : "organization"} ${id} not found`);
}
