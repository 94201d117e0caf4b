import type { Selectable } from "kysely";
import type { SigningKeyTable } from "../../store/schema.js";

export type SigningKeyRow = Selectable<SigningKeyTable>;

/** How an instance's signing keys rotate. */
export interface KeyPolicy {
  algorithm: "ES256" | "RS256";
  /** How long a key signs before its successor takes over. */
  rotateEveryMs: number;
  /**
   * How long a key is published before it signs: longer than any relying party caches the
   * JWKS, so that none meets a token signed by a key it has not seen.
   */
  publishAheadMs: number;
  /** How long a retired key stays published: the longest lifetime of a token it signed. */
  retainMs: number;
}

export interface RotationPlan {
  /** A key to create, signing from this time. */
  create?: { activatesAt: Date };
  /** The signing key that the created one will succeed, retiring at its activation. */
  retire?: { id: string; at: Date };
  /** Keys no token signed by them can still be valid with: out of the JWKS for good. */
  remove: string[];
}

const time = (d: Date) => d.getTime();

/** The key that signs at `now`: of those active by then, the one activated last. */
export function signingKeyAt(rows: readonly SigningKeyRow[], now: Date): SigningKeyRow | undefined {
  return rows.filter((r) => time(r.activates_at) <= time(now)).sort((a, b) => time(b.activates_at) - time(a.activates_at))[0];
}

/**
 * What keeps an instance's keys in order at `now`. Without any key, the first signs at once
 * (no token can exist yet). A successor is created `publishAheadMs` before the current key
 * is due, or at once when `force` asks for a rotation; it activates no earlier than
 * `publishAheadMs` after its creation, so it is always published before it signs.
 */
export function planRotation(rows: readonly SigningKeyRow[], now: Date, policy: KeyPolicy, force = false): RotationPlan {
  const remove = rows.filter((r) => r.retires_at !== null && time(r.retires_at) + policy.retainMs <= time(now)).map((r) => r.id);
  const active = signingKeyAt(rows, now);
  const pending = rows.some((r) => time(r.activates_at) > time(now));
  if (!active) return pending ? { remove } : { create: { activatesAt: now }, remove };
  if (pending) return { remove };
  const due = time(active.activates_at) + policy.rotateEveryMs;
  if (!force && time(now) < due - policy.publishAheadMs) return { remove };
  const activatesAt = new Date(Math.max(time(now) + policy.publishAheadMs, force ? 0 : due));
  return { create: { activatesAt }, retire: { id: active.id, at: activatesAt }, remove };
}

/** The keys a JWKS shows at `now`: every one not yet removed, the successor included. */
export function publishedAt(rows: readonly SigningKeyRow[], now: Date, policy: KeyPolicy): SigningKeyRow[] {
  return rows
    .filter((r) => time(r.created_at) <= time(now) && (r.retires_at === null || time(r.retires_at) + policy.retainMs > time(now)))
    .sort((a, b) => time(b.activates_at) - time(a.activates_at));
}
