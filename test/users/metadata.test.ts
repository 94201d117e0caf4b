import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { failed, humanUser, ok, uniqueName, Users } from "./helpers.js";

/** PlatformUsers metadata: key/value bytes per user, as action functions read and set them. */

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe.each(DATABASE_KINDS)("user metadata (%s)", (kind) => {
  let server: TestServer;
  let grpc: Users;
  let rest: Users;
  beforeAll(async () => {
    server = await startTestServer(kind);
    grpc = new Users(server);
    rest = new Users(server, "rest");
  }, 120_000);
  afterAll(() => server?.close());

  it("sets, replaces, reads, lists by key and deletes values; each change is a change of the user", async () => {
    const id = await grpc.create(humanUser(uniqueName("meta")));
    const before = (await grpc.get(id)).details.sequence;
    const set = ok(
      await rest.call("SetMetadata", {
        id,
        metadata: [
          { key: "b", value: b64("two") },
          { key: "a", value: b64("one") },
        ],
      }),
    );
    expect(BigInt(set.details.sequence)).toBeGreaterThan(BigInt(before));
    ok(
      await grpc.call("SetMetadata", {
        id,
        metadata: [
          { key: "b", value: b64("zwei") },
          { key: "c", value: b64("\u0000binary\u00ff") },
        ],
      }),
    );

    const got = ok(await rest.call("GetMetadata", { id, key: "b" }));
    expect(got.metadata).toEqual({ key: "b", value: b64("zwei") });
    expect(Date.parse(got.changeDate)).not.toBeNaN();
    const listed = ok(await grpc.call("SearchMetadata", { id, query: { asc: true } }));
    expect(listed.result.map((m: { key: string }) => m.key)).toEqual(["a", "b", "c"]);
    // Descending unless asked, as every search of the API.
    expect(ok(await rest.call("SearchMetadata", { id })).result.map((m: { key: string }) => m.key)).toEqual(["c", "b", "a"]);
    expect(listed.details.totalResult).toBe("3");
    const second = ok(await grpc.call("SearchMetadata", { id, query: { offset: "1", limit: 1, asc: true } }));
    expect(second.result).toEqual([{ key: "b", value: b64("zwei") }]);

    ok(await rest.call("DeleteMetadata", { id, key: "a" }));
    failed(await grpc.call("GetMetadata", { id, key: "a" }), Code.NotFound);
    failed(await rest.call("DeleteMetadata", { id, key: "a" }), Code.NotFound);
    expect(ok(await grpc.call("SearchMetadata", { id, query: { asc: true } })).result.map((m: { key: string }) => m.key)).toEqual(["b", "c"]);
  });

  it("refuses a key given twice, empty or oversized keys and values, and too many at once", async () => {
    const id = await grpc.create(humanUser(uniqueName("meta-bad")));
    expect(
      failed(
        await grpc.call("SetMetadata", {
          id,
          metadata: [
            { key: "k", value: b64("1") },
            { key: "k", value: b64("2") },
          ],
        }),
        Code.InvalidArgument,
      ).message,
    ).toContain("twice");
    failed(await grpc.call("SetMetadata", { id, metadata: [{ key: "", value: b64("1") }] }), Code.InvalidArgument);
    failed(await grpc.call("SetMetadata", { id, metadata: [{ key: "k".repeat(201), value: b64("1") }] }), Code.InvalidArgument);
    failed(await grpc.call("SetMetadata", { id, metadata: [{ key: "k", value: "" }] }), Code.InvalidArgument);
    failed(await grpc.call("SetMetadata", { id, metadata: [{ key: "k", value: Buffer.alloc(65537).toString("base64") }] }), Code.InvalidArgument);
    ok(await grpc.call("SetMetadata", { id, metadata: [{ key: "k", value: Buffer.alloc(65536).toString("base64") }] }));
    failed(await grpc.call("SetMetadata", { id, metadata: Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, value: b64("v") })) }), Code.InvalidArgument);
    failed(await grpc.call("SetMetadata", { id, metadata: [] }), Code.InvalidArgument);
    // Nothing of a refused request was written.
    expect(ok(await grpc.call("SearchMetadata", { id })).result.map((m: { key: string }) => m.key)).toEqual(["k"]);
    failed(await grpc.call("SetMetadata", { id: "no-such-user", metadata: [{ key: "k", value: b64("1") }] }), Code.NotFound);
  });

  it("goes with its user", async () => {
    const username = uniqueName("meta-gone");
    const id = await grpc.create(humanUser(username));
    ok(await grpc.call("SetMetadata", { id, metadata: [{ key: "k", value: b64("1") }] }));
    ok(await grpc.call("DeleteUser", { id }));
    failed(await grpc.call("SearchMetadata", { id }), Code.NotFound);
    const rows = await server.service.store.db.selectFrom("user_metadata").select("key").where("user_id", "=", id).execute();
    expect(rows).toEqual([]);
  });
});
