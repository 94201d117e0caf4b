import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage, type Msg } from "../support/results.js";
import type { TestServer } from "../support/server.js";
import type { Receiver } from "../support/target-receiver.js";
import { until } from "../support/until.js";
import { actionsApi, startWithReceiver } from "./helpers.js";

/*
 * The delivery log's retention, shrunk to 1 s by PLATFORM_ACTIONS_DELIVERY_RETENTION and
 * swept every 100 ms, and its isolation between instances. Instance A (localhost) keeps its
 * log for an hour by its audit log retention; instance B has none, so the default counts.
 */

const ADDED = { event: { event: "user.human.added" } };

describe.each(DATABASE_KINDS)("retention and isolation of event deliveries (%s)", (kind) => {
  let server: TestServer;
  let receiver: Receiver;
  let a: ReturnType<typeof actionsApi>;
  let b: ReturnType<typeof actionsApi>;
  let bInstance = "";
  /** Calls to these paths wait until the test releases them. */
  const holds = new Map<string, () => void>();

  function hold(path: string) {
    const held = new Promise<void>((resolve) => holds.set(path, resolve));
    receiver.answers.set(path, async () => {
      await held;
      return {};
    });
  }

  const ofTarget = (api: typeof a, id: string) => api.deliveries([{ target: { id } }]);

  let close = async () => {};

  beforeAll(async () => {
    let origin: string;
    ({ server, receiver, origin, close } = await startWithReceiver(kind, {
      PLATFORM_ACTIONS_DELIVERY_POLL_INTERVAL: "50ms",
      PLATFORM_ACTIONS_DELIVERY_RETENTION: "1s",
      PLATFORM_ACTIONS_DELIVERY_SWEEP_INTERVAL: "100ms",
    }));
    const instances = protocolClient(PlatformInstances, "grpc", server.baseUrl);
    okMessage(await instances.call("Limit", { id: server.instanceId, limits: { auditLogRetention: "3600s" } }, server.adminToken));
    bInstance = (await server.createInstance("deliveries-b.example")).instanceId;
    a = actionsApi(server, origin);
    b = actionsApi(server, origin, { instanceId: bInstance });
  }, 120_000);
  afterAll(async () => {
    for (const release of holds.values()) release();
    await close();
  });

  it("removes delivered and failed deliveries past the retention; keeps pending ones, and those an audit log retention keeps", async () => {
    const [done, gone, held] = [await b.target("b-done"), await b.target("b-gone"), await b.target("b-held", "20s")];
    await b.put(ADDED, [done.id, gone.id, held.id]);
    receiver.answers.set("/b-gone", () => ({ status: 500 }));
    hold("/b-held");
    const kept = await a.target("a-kept");
    await a.put(ADDED, [kept.id]);

    await b.createUser();
    await a.createUser();
    const delivered = await until("B's delivery", async () => (await ofTarget(b, done.id)).find((d: Msg) => d.status === "DELIVERY_STATUS_DELIVERED"));
    await until("B's failing call", () => receiver.callsTo("/b-gone").length > 0);
    await until("B's held call", () => receiver.callsTo("/b-held").length > 0);
    const ofA = await until("A's delivery", async () => (await ofTarget(a, kept.id)).find((d: Msg) => d.status === "DELIVERY_STATUS_DELIVERED"));

    // Its target gone, the failing delivery fails for good at its next attempt.
    expect(delivered.attempts).toBe(1);
    okMessage(await b.actions().call("DeleteTarget", { id: gone.id, ctx: { instanceId: bInstance } }, server.adminToken));
    await until("B's delivered row removed", async () => (await ofTarget(b, done.id)).length === 0, 10_000);
    await until("B's failed row removed", async () => (await ofTarget(b, gone.id)).length === 0, 10_000);

    // Older than the retention too, the pending one stays.
    const [pending] = await ofTarget(b, held.id);
    expect(pending).toMatchObject({ status: "DELIVERY_STATUS_PENDING" });
    expect(Date.now() - Date.parse(pending.creationDate)).toBeGreaterThan(1000);

    // A's audit log retention (an hour) counts instead of the default: a few sweeps past a second, its row is there.
    await until("A's row past the default retention and a few sweeps", () => Date.now() - Date.parse(ofA.creationDate) > 1500);
    expect(await ofTarget(a, kept.id)).toHaveLength(1);
    holds.get("/b-held")!();
  }, 30_000);

  it("keeps each instance's deliveries to itself: another instance's is NotFound to RetryDelivery and absent from the log", async () => {
    const iso = await b.target("b-iso");
    await b.put(ADDED, [iso.id]);
    hold("/b-iso");
    await b.createUser();
    const [theirs] = await until("B's pending delivery", async () => {
      const found = await ofTarget(b, iso.id);
      return found.length > 0 && found;
    });
    // It exists in B (pending: refused there), and is nothing in A.
    expect(await b.retry(theirs.id)).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(await a.retry(theirs.id)).toMatchObject({ ok: false, code: Code.NotFound });
    const rest = await protocolClient(PlatformActions, "rest", server.baseUrl).call("RetryDelivery", { id: theirs.id }, server.adminToken);
    expect(rest).toMatchObject({ ok: false, httpStatus: 404 });
    const mine = (await a.deliveries([])).map((d: JsonObject) => d.id);
    expect(mine).not.toContain(theirs.id);
    holds.get("/b-iso")!();
  });
});
