import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { h1 } from "../server/raw-http.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Database faults, injected with their exact SQLSTATE by a trigger on the targets table, so
 * that each is reproduced the same way on PGlite and PostgreSQL.
 */
describe.each(DATABASE_KINDS)("database faults map to the right codes (%s)", (kind) => {
  let server: TestServer;
  let names = 0;
  const db = () => server.service.store.db;

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_DB_CONFLICT_RETRIES: "3" });
    await sql`create table test_fault (errcode text not null, times int not null)`.execute(db());
    await sql`insert into test_fault values ('00000', 0)`.execute(db());
    // A sequence, because nextval survives the rollback of the transaction the fault aborts.
    await sql`create sequence test_fault_seq`.execute(db());
    await sql`create function test_fault_raise() returns trigger language plpgsql as $$
      declare f record;
      begin
        select * into f from test_fault;
        if nextval('test_fault_seq') <= f.times then
          raise exception 'injected fault %', f.errcode using errcode = f.errcode;
        end if;
        return new;
      end $$`.execute(db());
    await sql`create trigger test_fault before insert on targets for each row execute function test_fault_raise()`.execute(db());
  });
  afterAll(() => server?.close());

  async function inject(errcode: string, times: number) {
    await sql`update test_fault set errcode = ${errcode}, times = ${times}`.execute(db());
    await sql`alter sequence test_fault_seq restart`.execute(db());
  }
  const attempts = async () => (await sql<{ n: number }>`select last_value as n from test_fault_seq`.execute(db())).rows[0]!.n;
  const targetCount = async () =>
    (
      await db()
        .selectFrom("targets")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow()
    ).n;
  const createOverRest = (name = `t${++names}`) =>
    h1(`${server.baseUrl}/resources/v3alpha/targets`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name, restWebhook: { url: "https://example.com/hook" } }),
    });

  it.each([
    ["57P03", "cannot connect now (starting up)", 503, Code.Unavailable],
    ["57P01", "admin shutdown", 503, Code.Unavailable],
    ["57P02", "crash shutdown", 503, Code.Unavailable],
    ["53300", "too many connections", 503, Code.Unavailable],
    ["08006", "connection failure", 503, Code.Unavailable],
    ["08001", "unable to connect", 503, Code.Unavailable],
    ["57014", "statement timeout", 504, Code.DeadlineExceeded],
    ["55P03", "lock timeout", 504, Code.DeadlineExceeded],
  ])("%s (%s) answers %i with a generic message", async (errcode, _what, status, code) => {
    await inject(errcode, 100);
    const before = await targetCount();
    const res = await createOverRest();
    expect(res.status).toBe(status);
    const body = JSON.parse(res.body) as { code: number; message: string };
    expect(body.code).toBe(code);
    expect(body.message).not.toMatch(/injected|sqlstate|\d{2}[0-9A-Z]{3}/i);
    if (status === 503) expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    else expect(res.headers["retry-after"]).toBeUndefined();
    expect(await targetCount()).toBe(before);

    // The same code on gRPC, where the call is binary end to end.
    const grpc = await protocolClient(PlatformActions, "grpc", server.baseUrl).call(
      "CreateTarget",
      { target: { name: `g${++names}`, restWebhook: { url: "https://example.com" } } },
      server.adminToken,
    );
    expect(grpc).toMatchObject({ ok: false, code });
  });

  it("retries a serialization failure inside the command and succeeds once", async () => {
    await inject("40001", 2);
    const before = await targetCount();
    const res = await createOverRest();
    expect(res.status).toBe(201);
    expect(await attempts()).toBe(3);
    expect(await targetCount()).toBe(before + 1);
  });

  it("retries a deadlock the configured number of times, then answers Aborted (409) having written nothing", async () => {
    await inject("40P01", 100);
    const before = await targetCount();
    const res = await createOverRest();
    expect(res.status).toBe(409);
    expect(JSON.parse(res.body)).toMatchObject({ code: Code.Aborted });
    expect(await attempts()).toBe(4);
    expect(await targetCount()).toBe(before);
  });

  it("serves normally once the fault is gone", async () => {
    await inject("00000", 0);
    expect((await createOverRest()).status).toBe(201);
  });
});
