import { createPublicKey, type KeyObject } from "node:crypto";
import type { OidcSettings } from "../../config/oidc.js";
import type { SecretBox } from "../../crypto/encryption.js";
import { maintainSigningKeys, privateJwkOf } from "../../domain/signing-key/commands.js";
import { publishedAt, signingKeyAt, type KeyPolicy, type SigningKeyRow } from "../../domain/signing-key/rotation.js";
import type { Store } from "../../store/database.js";

/** What a provider signs and verifies with at one time. */
export interface KeySet {
  /** Private JWKs for the provider: the signing key first, the others marked verify-only. */
  privateJwks: Record<string, unknown>[];
  /** Public keys by kid, for verifying tokens outside the provider. */
  publicKeys: ReadonlyMap<string, { key: KeyObject; alg: string }>;
  signingAlg: "ES256" | "RS256";
  /** Changes whenever the published keys or the signing key change. */
  version: string;
  /** Past this, the set must be loaded again. */
  freshUntil: number;
  /** The key activated last, or about to be: after a rotation, the new one. */
  latest: { kid: string; activatesAt: Date };
}

function keyPolicy(settings: OidcSettings): KeyPolicy {
  return {
    algorithm: settings.signingAlg,
    rotateEveryMs: settings.keyRotateEveryMs,
    publishAheadMs: settings.keyPublishAheadMs,
    // The longest a token signed by a key can live after the key stops signing.
    retainMs: Math.max(settings.accessTokenTtlS, settings.idTokenTtlS) * 1000 + 60_000,
  };
}

/**
 * The signing keys of each instance, kept in order (rotation.ts) and cached per process. A
 * set is loaded again when its next scheduled change (a successor activating, a retired key
 * leaving the JWKS) is due, and at least every quarter of the publication lead, so that
 * a successor created by another process is seen well before it signs.
 */
export class SigningKeys {
  readonly #sets = new Map<string, KeySet>();
  readonly #loading = new Map<string, Promise<KeySet>>();
  readonly #policy: KeyPolicy;

  constructor(
    private readonly store: Pick<Store, "transact">,
    private readonly box: SecretBox,
    settings: OidcSettings,
    private readonly maxInstances: number,
  ) {
    this.#policy = keyPolicy(settings);
  }

  get policy(): KeyPolicy {
    return this.#policy;
  }

  /** The instance's current key set, creating or rotating keys when due. */
  async get(instanceId: string): Promise<KeySet> {
    const cached = this.#sets.get(instanceId);
    if (cached && cached.freshUntil > Date.now()) return cached;
    return this.#load(instanceId, false);
  }

  /** Rotates now: a successor is created at once and signs after the publication lead. */
  async rotate(instanceId: string): Promise<KeySet> {
    return this.#load(instanceId, true);
  }

  /** Forgets an instance's keys, so that the next use reads them again. */
  forget(instanceId: string): void {
    this.#sets.delete(instanceId);
  }

  #load(instanceId: string, force: boolean): Promise<KeySet> {
    const running = this.#loading.get(instanceId);
    if (running && !force) return running;
    const loading = this.store
      .transact((tx) => maintainSigningKeys(tx, instanceId, new Date(), this.#policy, this.box, force))
      .then((rows) => {
        const set = this.#keySet(rows, new Date());
        if (this.#sets.size >= this.maxInstances && !this.#sets.has(instanceId)) this.#sets.delete(this.#sets.keys().next().value!);
        this.#sets.set(instanceId, set);
        return set;
      })
      .finally(() => this.#loading.delete(instanceId));
    this.#loading.set(instanceId, loading);
    return loading;
  }

  #keySet(rows: SigningKeyRow[], now: Date): KeySet {
    const published = publishedAt(rows, now, this.#policy);
    const signing = signingKeyAt(rows, now);
    if (!signing) throw new Error("no signing key after maintaining the keys");
    const ordered = [signing, ...published.filter((r) => r.id !== signing.id)];
    const privateJwks = ordered.map((row) => {
      const jwk = privateJwkOf(row, this.box) as Record<string, unknown>;
      // Keys that do not sign now (a successor not yet active, a retired one) only verify.
      return row.id === signing.id ? jwk : { ...jwk, key_ops: ["verify"] };
    });
    const latest = published.reduce((a, b) => (b.activates_at > a.activates_at ? b : a), signing);
    const publicKeys = new Map(ordered.map((row) => [row.id, { key: createPublicKey({ key: row.public_jwk, format: "jwk" }), alg: row.algorithm }]));
    return {
      privateJwks,
      publicKeys,
      signingAlg: signing.algorithm,
      version: `${signing.id}:${ordered.map((r) => r.id).join(",")}`,
      latest: { kid: latest.id, activatesAt: latest.activates_at },
      freshUntil: Math.min(nextChange(rows, now, this.#policy), now.getTime() + this.#policy.publishAheadMs / 4),
    };
  }
}

/** The next time the published set or the signing key changes by the passing of time alone. */
function nextChange(rows: readonly SigningKeyRow[], now: Date, policy: KeyPolicy): number {
  const times = rows.flatMap((r) => [
    r.activates_at.getTime(),
    ...(r.retires_at ? [r.retires_at.getTime() + policy.retainMs] : []),
    // The current key's successor is due to be created here.
    ...(r.retires_at ? [] : [r.activates_at.getTime() + policy.rotateEveryMs - policy.publishAheadMs]),
  ]);
  return Math.min(Infinity, ...times.filter((t) => t > now.getTime()));
}
