import type { Db } from "../../store/db.js";
import type { WebAuthnKind } from "./factor.js";

export interface WebAuthnKeyView {
  id: string;
  name: string;
  state: "pending" | "ready";
  rpId: string;
  createdAt: Date;
}

/** A user's credentials of a kind, newest first: registered ones and one still being registered. */
export async function webAuthnKeysOf(db: Db, instanceId: string, userId: string, kind: WebAuthnKind): Promise<WebAuthnKeyView[]> {
  const rows = await db
    .selectFrom("user_webauthn_keys")
    .select(["id", "name", "state", "rp_id", "created_at"])
    .where("instance_id", "=", instanceId)
    .where("user_id", "=", userId)
    .where("kind", "=", kind)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map((r) => ({ id: r.id, name: r.name, state: r.state, rpId: r.rp_id, createdAt: r.created_at }));
}

/** Whether a registered credential is bound to one device or synced (what its sign-in's `amr` says of it). */
export async function webAuthnDeviceType(db: Db, instanceId: string, id: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("user_webauthn_keys")
    .select("device_type")
    .where("instance_id", "=", instanceId)
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.device_type ?? undefined;
}
