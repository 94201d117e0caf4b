import type { Db } from "../../store/db.js";
import { deleteExpired } from "../../store/sweeper.js";

/** Deletes up to `limit` sessions whose lifetime ended: nothing can use them any more. */
export function sweepExpiredSessions(db: Db, now: Date, limit: number): Promise<number> {
  return deleteExpired(db, "sessions", now, limit);
}
