import { createPublicKey, createSign, createVerify } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretBox } from "../../src/crypto/encryption.js";
import { maintainSigningKeys, privateJwkOf, signingKeyRows } from "../../src/domain/signing-key/commands.js";
import { publishedAt, signingKeyAt, type KeyPolicy, type SigningKeyRow } from "../../src/domain/signing-key/rotation.js";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

const H = 3_600_000;
const POLICY: KeyPolicy = { algorithm: "ES256", rotateEveryMs: 24 * H, publishAheadMs: 1 * H, retainMs: 12 * H };
const T0 = new Date("2030-01-01T00:00:00Z");
const at = (hours: number) => new Date(T0.getTime() + hours * H);

/**
 * Signing keys of an instance over time (a clock passed in, the database real): published
 * before they sign, signing in turn, published after retiring for as long as their tokens
 * live, then gone; private parts sealed; one successor however many processes find it due.
 */
describe.each(DATABASE_KINDS)("signing key rotation (%s)", (kind) => {
  let server: TestServer;
  let box: SecretBox;
  beforeAll(async () => {
    server = await startTestServer(kind);
    box = new SecretBox(server.config.masterKey ?? "0123456789abcdef0123456789abcdef");
  });
  afterAll(() => server?.close());

  const maintain = (instanceId: string, now: Date, policy = POLICY, force = false) =>
    server.service.store.db.transaction().execute((tx) => maintainSigningKeys(tx, instanceId, now, policy, box, force));
  const kids = (rows: SigningKeyRow[]) => rows.map((r) => r.id);

  it("follows a key through its life: first at once, successor published ahead, retired key kept for the token lifetime", async () => {
    const { instanceId } = await server.createInstance("keys-life.example");
    const first = await maintain(instanceId, at(0));
    expect(first).toHaveLength(1);
    const k1 = first[0]!;
    expect(k1.activates_at).toEqual(at(0));
    expect(signingKeyAt(first, at(0))?.id).toBe(k1.id);

    // Nothing to do until the successor is due to be published (rotation 24 h, 1 h ahead).
    expect(kids(await maintain(instanceId, at(22.9)))).toEqual([k1.id]);
    const withNext = await maintain(instanceId, at(23));
    expect(withNext).toHaveLength(2);
    const k2 = withNext.find((r) => r.id !== k1.id)!;
    expect(k2.activates_at).toEqual(at(24));
    expect(withNext.find((r) => r.id === k1.id)!.retires_at).toEqual(at(24));
    // Published before it signs: the old key still signs, both are in the JWKS.
    expect(signingKeyAt(withNext, at(23.5))?.id).toBe(k1.id);
    expect(kids(publishedAt(withNext, at(23.5), POLICY))).toEqual([k2.id, k1.id]);
    // Running again changes nothing (one successor, not one per call).
    expect(await maintain(instanceId, at(23.5))).toHaveLength(2);

    expect(signingKeyAt(withNext, at(24))?.id).toBe(k2.id);
    // The retired key stays published until its tokens (12 h) can no longer be valid.
    expect(kids(publishedAt(withNext, at(35.9), POLICY))).toEqual([k2.id, k1.id]);
    expect(kids(publishedAt(withNext, at(36), POLICY))).toEqual([k2.id]);
    const later = await maintain(instanceId, at(36));
    expect(kids(later)).toEqual([k2.id]);

    const events = await server.service.store.db
      .selectFrom("events")
      .select(["event_type", "payload"])
      .where("instance_id", "=", instanceId)
      .where("aggregate_type", "=", "signing_keys")
      .orderBy("position")
      .execute();
    expect(events.map((e) => e.event_type)).toEqual(["signing_key.added", "signing_key.retiring", "signing_key.added", "signing_key.removed"]);
    // Events carry public keys only.
    expect(JSON.stringify(events.map((e) => e.payload))).not.toMatch(/"d":/);
  });

  it("seals the private key with the master key; it signs what the published key verifies", async () => {
    const { instanceId } = await server.createInstance("keys-seal.example");
    for (const algorithm of ["ES256", "RS256"] as const) {
      const rows = await maintain(instanceId, at(0), { ...POLICY, algorithm }, true);
      const key = rows.sort((a, b) => b.activates_at.getTime() - a.activates_at.getTime())[0]!;
      expect(key.algorithm).toBe(algorithm);
      expect(key.private_jwk).toMatch(/^v1\./);
      expect(key.private_jwk).not.toContain('"d"');
      const jwk = privateJwkOf(key, box);
      expect(jwk).toMatchObject({ kid: key.id, alg: algorithm, use: "sig", d: expect.any(String) });
      expect(key.public_jwk).toMatchObject({ kid: key.id, alg: algorithm, use: "sig" });
      expect((key.public_jwk as Record<string, string>).d).toBeUndefined();
      const signature = createSign("SHA256")
        .update("token")
        .sign({ key: jwk as never, format: "jwk" });
      expect(
        createVerify("SHA256")
          .update("token")
          .verify(createPublicKey({ key: key.public_jwk as never, format: "jwk" }), signature),
      ).toBe(true);
    }
  });

  it("rotates on demand: the new key is still published an hour before it signs", async () => {
    const { instanceId } = await server.createInstance("keys-force.example");
    const [k1] = await maintain(instanceId, at(0));
    const rotated = await maintain(instanceId, at(2), POLICY, true);
    const k2 = rotated.find((r) => r.id !== k1!.id)!;
    expect(k2.activates_at).toEqual(at(3));
    expect(signingKeyAt(rotated, at(2.5))?.id).toBe(k1!.id);
    expect(signingKeyAt(rotated, at(3))?.id).toBe(k2.id);
    // A second request while the successor is pending adds nothing.
    expect(await maintain(instanceId, at(2.5), POLICY, true)).toHaveLength(2);
  });

  it("creates one successor when many transactions find it due at once", async () => {
    const { instanceId } = await server.createInstance("keys-race.example");
    await maintain(instanceId, at(0));
    await Promise.all(Array.from({ length: 8 }, () => maintain(instanceId, at(23.5))));
    const rows = await signingKeyRows(server.service.store.db, instanceId);
    expect(rows).toHaveLength(2);
  });

  it("keeps instances apart; a deleted instance's keys go with it", async () => {
    const a = await server.createInstance("keys-a.example");
    const b = await server.createInstance("keys-b.example");
    const ka = await maintain(a.instanceId, at(0));
    const kb = await maintain(b.instanceId, at(0));
    expect(kids(await signingKeyRows(server.service.store.db, a.instanceId))).toEqual(kids(ka));
    expect(kids(ka)).not.toEqual(kids(kb));
    const deleted = await protocolClient(PlatformInstances, "grpc", server.baseUrl).call("DeleteInstance", { id: b.instanceId }, server.adminToken);
    expect(deleted).toMatchObject({ ok: true });
    expect(await signingKeyRows(server.service.store.db, b.instanceId)).toEqual([]);
    expect(kids(await signingKeyRows(server.service.store.db, a.instanceId))).toEqual(kids(ka));
  });
});
