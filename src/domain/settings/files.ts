import type { Db, Tx } from "../../store/db.js";
import { contextColumns, type ContextRef } from "../context.js";

/** A file that a kind of settings keeps in one context (a branding image). */
export interface SettingsFile {
  contentType: string;
  /** Of the data; URLs of the file name it. */
  hash: string;
  data: Uint8Array;
  changeDate: Date;
}

/** Stores a context's file of a name, replacing the one it had. Call after writeSettings, whose row lock orders concurrent writers. */
export async function putSettingsFile(tx: Tx, kind: string, at: ContextRef, name: string, file: SettingsFile): Promise<void> {
  const row = { content_type: file.contentType, hash: file.hash, data: file.data, change_date: file.changeDate };
  await tx
    .insertInto("settings_files")
    .values({ ...contextColumns(at), kind, name, ...row })
    .onConflict((oc) => oc.columns(["instance_id", "org_id", "kind", "name"]).doUpdateSet(row))
    .execute();
}

export async function removeSettingsFile(tx: Tx, kind: string, at: ContextRef, name: string): Promise<void> {
  const columns = contextColumns(at);
  await tx
    .deleteFrom("settings_files")
    .where("instance_id", "=", columns.instance_id)
    .where("org_id", "=", columns.org_id)
    .where("kind", "=", kind)
    .where("name", "=", name)
    .execute();
}

/** A context's file of a name, when its content has this hash (an older URL finds nothing). */
export async function settingsFile(db: Db | Tx, kind: string, at: ContextRef, name: string, hash: string): Promise<SettingsFile | undefined> {
  const columns = contextColumns(at);
  const row = await db
    .selectFrom("settings_files")
    .select(["content_type", "hash", "data", "change_date"])
    .where("instance_id", "=", columns.instance_id)
    .where("org_id", "=", columns.org_id)
    .where("kind", "=", kind)
    .where("name", "=", name)
    .where("hash", "=", hash)
    .executeTakeFirst();
  return row && { contentType: row.content_type, hash: row.hash, data: row.data, changeDate: row.change_date };
}
