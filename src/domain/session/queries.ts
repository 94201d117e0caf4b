import { sql } from "kysely";
import { hashToken } from "../../crypto/tokens.js";
import type { Db, Tx } from "../../store/db.js";
import type { SessionRow } from "../../store/schema.js";
import { AGGREGATE, type SessionFactor, type SessionFactorsJson, type SessionView } from "./model.js";
import { prepared } from "../../store/prepared.js";
import { searchPage, type Page } from "../../store/search.js";
import { notFound } from "../errors.js";
import { constantTimeEqual } from "../../crypto/equal.js";

const FACTORS: SessionFactor[] = ["password", "totp", "otpEmail", "otpSms", "recoveryCode"];

function sessions(db: Db | Tx, instanceId: string) {
  return db
    .selectFrom("sessions as s")
    .leftJoin("users as u", (j) => j.onRef("u.instance_id", "=", "s.instance_id").onRef("u.id", "=", "s.user_id"))
    .select([
      "s.instance_id",
      "s.id",
      "s.factors",
      "s.metadata",
      "s.user_agent",
      "s.expires_at",
      "s.created_at",
      "s.change_date",
      "s.sequence",
      "u.id as user_id",
      "u.org_id as user_org_id",
      "u.name as user_name",
      sql<
        string | null
      >`u.username || '@' || coalesce((select d.domain from org_domains d where d.instance_id = u.instance_id and d.org_id = u.org_id and d.is_primary), '')`.as(
        "login_name",
      ),
    ])
    .where("s.instance_id", "=", instanceId);
}
type Row = Awaited<ReturnType<ReturnType<typeof sessions>["executeTakeFirstOrThrow"]>>;

function view(row: Row): SessionView {
  const f = row.factors as SessionFactorsJson;
  const factors: SessionView["factors"] = {};
  for (const name of FACTORS) if (f[name]) factors[name] = new Date(f[name]!.checkedAt);
  const metadata = Object.fromEntries(Object.entries(row.metadata as Record<string, string>).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, "base64"))]));
  return {
    details: { id: row.id, sequence: Number(row.sequence), changeDate: row.change_date, owner: { type: "instance", id: row.instance_id } },
    createdAt: row.created_at,
    // A user removed since is no longer named: the session checks nobody.
    user:
      row.user_id && f.user
        ? {
            id: row.user_id,
            loginName: row.login_name ?? "",
            displayName: row.user_name ?? "",
            orgId: row.user_org_id ?? "",
            checkedAt: new Date(f.user.checkedAt),
          }
        : undefined,
    factors,
    webAuthN: f.webAuthN && { checkedAt: new Date(f.webAuthN.checkedAt), userVerified: f.webAuthN.userVerified },
    idpIntent: f.idpIntent && { checkedAt: new Date(f.idpIntent.checkedAt), idpId: f.idpIntent.idpId },
    metadata,
    userAgent: row.user_agent,
    expiresAt: row.expires_at ?? undefined,
  };
}

export async function getSession(db: Db, instanceId: string, id: string): Promise<SessionView> {
  const row = await sessions(db, instanceId).where("s.id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`session ${id} not found`);
  return view(row);
}

export type SessionFilter =
  | { kind: "ids"; ids: string[] }
  | { kind: "user"; userId: string }
  | { kind: "created"; date: Date; op: "=" | ">" | ">=" | "<" | "<=" }
  | { kind: "fingerprint"; fingerprintId: string };

/** Sessions matching every filter, newest first unless `page.asc`; `ownerId` limits them to one user's. */
export async function searchSessions(db: Db, instanceId: string, search: { filters: SessionFilter[]; page: Page; ownerId?: string }) {
  let q = db.selectFrom("sessions").where("sessions.instance_id", "=", instanceId);
  if (search.ownerId !== undefined) q = q.where("sessions.user_id", "=", search.ownerId);
  for (const f of search.filters) {
    if (f.kind === "ids") q = q.where("sessions.id", "in", f.ids);
    else if (f.kind === "user") q = q.where("sessions.user_id", "=", f.userId);
    else if (f.kind === "created") q = q.where("sessions.created_at", f.op, f.date);
    else q = q.where(sql<string>`sessions.user_agent->>'fingerprintId'`, "=", f.fingerprintId);
  }
  const found = await searchPage(
    db,
    AGGREGATE,
    instanceId,
    q,
    (qb, direction) => qb.orderBy("sessions.created_at", direction).orderBy("sessions.id", direction),
    search.page,
    ["id"],
  );
  if (found.rows.length === 0) return { ...found, rows: [] };
  // The page's sessions, read again with their users: the page's statement reads their ids.
  const ids = found.rows.map((r) => r.id);
  const full = new Map((await sessions(db, instanceId).where("s.id", "in", ids).execute()).map((r) => [r.id, r]));
  return { ...found, rows: ids.flatMap((id) => (full.has(id) ? [view(full.get(id)!)] : [])) };
}

/* Every PatchSession and DeleteSession is authorized by one of these first: prepared (store/prepared.ts). */
const ownerOf = prepared((db, p: { instanceId: string; id: string }) =>
  db.selectFrom("sessions").select("user_id").where("instance_id", "=", p.instanceId).where("id", "=", p.id),
);
const tokenOf = prepared((db, p: { instanceId: string; id: string }) =>
  db.selectFrom("sessions").select("token_hash").where("instance_id", "=", p.instanceId).where("id", "=", p.id),
);

/** The owner of a session for authorization: its instance, and its user (who may act on it as "self"). */
export async function sessionOwner(db: Db, instanceId: string, id: string): Promise<{ instanceId: string; userId?: string } | undefined> {
  const [row] = await ownerOf(db, { instanceId, id });
  return row && { instanceId, ...(row.user_id && { userId: row.user_id }) };
}

/** Whether a token is the session's current one (compared in constant time). */
export async function holdsSessionToken(db: Db, instanceId: string, id: string, token: string): Promise<boolean> {
  const [row] = await tokenOf(db, { instanceId, id });
  return row !== undefined && constantTimeEqual(row.token_hash, hashToken(token));
}

/** The session's row as stored, if there is one. */
export function findSessionRow(db: Db, instanceId: string, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom("sessions").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
}
