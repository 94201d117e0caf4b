import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccessEpoch } from "../../src/cache/access-epoch.js";
import { payloadAdapters, sweepExpiredPayloads } from "../../src/oidc/adapters/payload-adapter.js";
import { JWT_RECORD_MODEL } from "../../src/oidc/adapters/token-models.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/** node-oidc-provider's adapter contract (example/my_adapter.js) on both databases, per instance. */
describe.each(DATABASE_KINDS)("the provider's payload adapter (%s)", (kind) => {
  let server: TestServer;
  let other: string;
  beforeAll(async () => {
    server = await startTestServer(kind);
    other = (await server.createInstance("adapter-other.example")).instanceId;
  });
  afterAll(() => server?.close());

  const adapter = (model: string, instanceId = server.instanceId) => new (payloadAdapters(() => server.service.store.db, instanceId))(model);

  it("stores, finds, replaces and destroys by id, per model and per instance", async () => {
    const codes = adapter("AuthorizationCode");
    await codes.upsert("c1", { jti: "c1", kind: "AuthorizationCode", grantId: "g1", scope: "openid", nested: { a: [1, "x"] } }, 60);
    expect(await codes.find("c1")).toEqual({ jti: "c1", kind: "AuthorizationCode", grantId: "g1", scope: "openid", nested: { a: [1, "x"] } });
    expect(await adapter("AccessToken").find("c1"), "another model").toBeUndefined();
    expect(await adapter("AuthorizationCode", other).find("c1"), "another instance").toBeUndefined();
    await codes.upsert("c1", { jti: "c1", kind: "AuthorizationCode", scope: "openid email" }, 60);
    expect(await codes.find("c1")).toEqual({ jti: "c1", kind: "AuthorizationCode", scope: "openid email" });
    await codes.destroy("c1");
    expect(await codes.find("c1")).toBeUndefined();
    await codes.destroy("c1");
  });

  it("marks consumption on later finds, until the model is stored anew", async () => {
    const codes = adapter("AuthorizationCode");
    await codes.upsert("c2", { jti: "c2" }, 60);
    const before = Math.floor(Date.now() / 1000);
    await codes.consume("c2");
    const consumed = await codes.find("c2");
    expect(consumed).toEqual({ jti: "c2", consumed: expect.any(Number) });
    expect(consumed!.consumed).toBeGreaterThanOrEqual(before);
    await codes.upsert("c2", { jti: "c2", again: true }, 60);
    expect(await codes.find("c2")).toEqual({ jti: "c2", again: true });
  });

  it("finds sessions by uid and device codes by user code", async () => {
    await adapter("Session").upsert("s1", { jti: "s1", uid: "u-1", accountId: "a" }, 60);
    expect(await adapter("Session").findByUid("u-1")).toEqual({ jti: "s1", uid: "u-1", accountId: "a" });
    expect(await adapter("Session", other).findByUid("u-1")).toBeUndefined();
    await adapter("DeviceCode").upsert("d1", { jti: "d1", userCode: "ABCD-EFGH" }, 60);
    expect(await adapter("DeviceCode").findByUserCode("ABCD-EFGH")).toEqual({ jti: "d1", userCode: "ABCD-EFGH" });
    expect(await adapter("DeviceCode").findByUserCode("WXYZ")).toBeUndefined();
  });

  it("revokes every model of a grant in its instance only", async () => {
    await adapter("AccessToken").upsert("at", { jti: "at", grantId: "g2" }, 60);
    await adapter("RefreshToken").upsert("rt", { jti: "rt", grantId: "g2" }, 60);
    await adapter("RefreshToken").upsert("rt-other-grant", { jti: "rt-other-grant", grantId: "g3" }, 60);
    await adapter("RefreshToken", other).upsert("rt", { jti: "rt", grantId: "g2" }, 60);
    await adapter("AccessToken").revokeByGrantId("g2");
    expect(await adapter("AccessToken").find("at")).toBeUndefined();
    expect(await adapter("RefreshToken").find("rt")).toBeUndefined();
    expect(await adapter("RefreshToken").find("rt-other-grant")).toEqual({ jti: "rt-other-grant", grantId: "g3" });
    expect(await adapter("RefreshToken", other).find("rt")).toEqual({ jti: "rt", grantId: "g2" });
  });

  it("advances the access epoch when access tokens go before they expire, and only then", async () => {
    const access = new AccessEpoch();
    const ending = (model: string) => new (payloadAdapters(() => server.service.store.db, server.instanceId, access))(model);
    const advanced = async (what: () => Promise<void>) => {
      const before = access.value;
      await what();
      return access.value !== before;
    };
    await ending("AccessToken").upsert("at-e", { jti: "at-e", grantId: "g-e" }, 60);
    await ending(JWT_RECORD_MODEL).upsert("jr-e", { jti: "jr-e", grantId: "g-e" }, 60);
    await ending("RefreshToken").upsert("rt-e", { jti: "rt-e", grantId: "g-e" }, 60);
    await ending("AuthorizationCode").upsert("c-e", { jti: "c-e", grantId: "g-e2" }, 60);
    expect(await advanced(() => ending("RefreshToken").destroy("rt-e")), "a refresh token").toBe(false);
    expect(await advanced(() => ending("AccessToken").destroy("at-e")), "an opaque access token").toBe(true);
    expect(await advanced(() => ending("AccessToken").destroy("at-e")), "one that is gone already").toBe(false);
    expect(await advanced(() => ending("AuthorizationCode").revokeByGrantId("g-e2")), "a grant with a code only").toBe(false);
    expect(await advanced(() => ending("AuthorizationCode").revokeByGrantId("g-e")), "a grant with a JWT's record").toBe(true);
    expect(await ending(JWT_RECORD_MODEL).find("jr-e")).toBeUndefined();
  });

  it("hides what expired at once and sweeps it in batches; no expiry lives until destroyed", async () => {
    const db = server.service.store.db;
    await adapter("Interaction").upsert("i1", { jti: "i1" }, 1);
    await adapter("Interaction").upsert("i2", { jti: "i2" }, 1);
    await adapter("Grant").upsert("forever", { jti: "forever" }, 0);
    await db
      .updateTable("oidc_payloads")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("id", "in", ["i1", "i2"])
      .execute();
    expect(await adapter("Interaction").find("i1")).toBeUndefined();
    expect(await sweepExpiredPayloads(db, new Date(), 1)).toBe(1);
    expect(await sweepExpiredPayloads(db, new Date(), 10)).toBe(1);
    expect(await sweepExpiredPayloads(db, new Date(), 10)).toBe(0);
    expect(await db.selectFrom("oidc_payloads").select("id").where("id", "in", ["i1", "i2"]).execute()).toEqual([]);
    expect(await adapter("Grant").find("forever")).toEqual({ jti: "forever" });
  });
});
