import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PlatformEvents } from "../../gen/platform/resources/event/v3alpha/event_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformProjects } from "../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createLogger } from "../../src/log/logger.js";
import { startService } from "../../src/server/start.js";
import { until } from "../support/until.js";
import { STREAM_PROTOCOLS, StreamError, watchEvents } from "./event-streams.js";

type Found = { result?: JsonObject[]; continuation?: string };

const ok = (r: CallResult): JsonObject => {
  if (!r.ok) throw new Error(`call failed: ${r.code} ${r.message}`);
  return r.message;
};
const idOf = (r: CallResult) => (ok(r).details as { id: string }).id;
const typesOf = (found: Found) => (found.result ?? []).map((e) => e.type);

describe.each(DATABASE_KINDS)("the audit log: PlatformEvents (%s)", (kind) => {
  let server: TestServer;
  let orgB: string;
  let orgOwner: { userId: string; token: string };
  const search = (req: JsonObject, token = server.adminToken, protocol: (typeof PROTOCOLS)[number] = "connect") =>
    protocolClient(PlatformEvents, protocol, server.baseUrl).call("SearchEvents", req, token);
  const projects = () => protocolClient(PlatformProjects, "connect", server.baseUrl);
  const newProject = async (name: string, token = server.adminToken, orgId = orgB) =>
    idOf(await projects().call("CreateProject", { project: { name }, ctx: { orgId } }, token));

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PLATFORM_EVENTS_WATCH_POLL_INTERVAL: "50ms",
      PLATFORM_EVENTS_WATCH_HEARTBEAT: "200ms",
      PLATFORM_EVENTS_WATCH_PER_INSTANCE: "4",
      PLATFORM_AUDIT_SIGNIN_RETENTION: "1m",
      PLATFORM_AUDIT_SIGNIN_SWEEP_INTERVAL: "100ms",
    });
    orgB = idOf(
      await protocolClient(PlatformOrganizations, "connect", server.baseUrl).call(
        "CreateOrganization",
        { organization: { name: "Audited B" } },
        server.adminToken,
      ),
    );
    orgOwner = await server.createUser({ roles: [{ context: "org", contextId: orgB, roles: ["ORG_OWNER"] }] });
  });
  afterAll(() => server?.close());
  // Streams a failed test left open would hold the instance's stream slots.
  const open: { close(): void }[] = [];
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  const watch = async (...args: Parameters<typeof watchEvents>) => {
    const stream = await watchEvents(...args);
    open.push(stream);
    return stream;
  };

  it("answers a resource's history alike over every protocol: the editor, where the change came from, and the payload without secrets", async () => {
    // A target holds a signing key: its event must not show it.
    const res = await fetch(`${server.baseUrl}/resources/v3alpha/targets`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json", "user-agent": "audit-test/1.0" },
      body: JSON.stringify({ name: "audited-hook", restWebhook: { url: "https://example.com/hook" }, timeout: "10s" }),
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { details: { id: string }; signingKey: string };
    const answers: Record<string, unknown> = {};
    for (const protocol of PROTOCOLS) {
      const found = ok(await search({ filters: [{ resource: { type: "target", id: created.details.id } }] }, server.adminToken, protocol)) as Found;
      answers[protocol] = found;
      expect(found.result).toHaveLength(1);
      const [event] = found.result!;
      expect(event).toMatchObject({ type: "target.added", resource: { type: "target", id: created.details.id }, sequence: "1", instanceId: server.instanceId });
      expect(event!.organizationId ?? "").toBe("");
      const editor = event!.editor as JsonObject;
      expect(editor.client).toMatch(/^pat:/);
      expect(editor.ipAddress).toMatch(/127\.0\.0\.1$/);
      expect(editor.userAgent).toBe("audit-test/1.0");
      expect((event!.payload as JsonObject).name).toBe("audited-hook");
      expect(JSON.stringify(event)).not.toContain(created.signingKey);
      expect(event!.position).toMatch(/^\d+\.\d+$/);
    }
    for (const protocol of PROTOCOLS) expect(answers[protocol]).toEqual(answers.connect);
  });

  it("pages by continuation, newest first or oldest first, without repeating or skipping while others write", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await newProject(`paged-${i}`));
    const filters: JsonObject[] = [{ types: { types: ["project.added"] } }, { organization: { orgId: orgB } }];
    const seen: string[] = [];
    let page = ok(await search({ filters, limit: 2 })) as Found;
    for (;;) {
      seen.push(...(page.result ?? []).map((e) => (e.resource as JsonObject).id as string));
      // A write between pages: newer than where newest-first paging started, so never on a later page.
      await newProject(`paged-during-${seen.length}`);
      if (!page.continuation) break;
      page = ok(await search({ filters, limit: 2, continuation: page.continuation })) as Found;
    }
    expect(seen.filter((id) => ids.includes(id))).toEqual([...ids].reverse());
    expect(new Set(seen).size).toBe(seen.length);

    const oldest = ok(await search({ filters, limit: 3, asc: true })) as Found;
    expect(oldest.result!.slice(0, 3).map((e) => (e.resource as JsonObject).id)).toEqual(ids.slice(0, 3));
    const misused = await search({ filters: [{ types: { types: ["project.changed"] } }], limit: 2, continuation: page.continuation || oldest.continuation! });
    expect(misused).toMatchObject({ ok: false, code: Code.InvalidArgument });
  });

  it("filters by event group, editor, organization, resource type and time", async () => {
    const since = new Date();
    const id = await newProject("filtered", orgOwner.token);
    await projects().call("PatchProject", { id, project: { name: "filtered-renamed" } }, orgOwner.token);
    const byGroup = ok(await search({ filters: [{ types: { groups: ["project"] } }, { timeRange: { since: since.toISOString() } }] })) as Found;
    expect(typesOf(byGroup)).toEqual(["project.changed", "project.added"]);
    const byEditor = ok(await search({ filters: [{ editor: { userId: orgOwner.userId } }] })) as Found;
    expect(byEditor.result!.every((e) => (e.editor as JsonObject).userId === orgOwner.userId)).toBe(true);
    expect(typesOf(byEditor)).toContain("project.added");
    const byType = ok(await search({ filters: [{ resourceTypes: { types: ["project"] } }, { organization: { orgId: orgB } }], limit: 1000 })) as Found;
    expect(byType.result!.every((e) => (e.resource as JsonObject).type === "project" && e.organizationId === orgB)).toBe(true);
    const future = ok(await search({ filters: [{ timeRange: { since: new Date(Date.now() + 60_000).toISOString() } }] })) as Found;
    expect(future.result ?? []).toEqual([]);
    const after = byGroup.result![1]!.position as string;
    const afterIt = ok(await search({ after, filters: [{ resource: { type: "project", id } }] })) as Found;
    expect(typesOf(afterIt)).toEqual(["project.changed"]);
  });

  it("shows an organization's owner its organization's events and nothing else", async () => {
    await newProject("isolated-b");
    const defaultOrgProject = await newProject("isolated-default", server.adminToken, server.defaultOrgId);
    const mine = ok(await search({ limit: 1000 }, orgOwner.token)) as Found;
    expect(mine.result!.length).toBeGreaterThan(0);
    expect(mine.result!.every((e) => e.organizationId === orgB)).toBe(true);
    expect(typesOf(mine)).not.toContain("target.added");
    const other = await search({ filters: [{ resource: { type: "project", id: defaultOrgProject } }] }, orgOwner.token);
    expect(ok(other).result ?? []).toEqual([]);
    expect(await search({ ctx: { orgId: server.defaultOrgId } }, orgOwner.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
    const plain = await server.createUser({});
    expect(await search({}, plain.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(await search({})).toMatchObject({ ok: true });
    expect(await protocolClient(PlatformEvents, "rest", server.baseUrl).call("SearchEvents", {})).toMatchObject({
      ok: false,
      code: Code.Unauthenticated,
      httpStatus: 401,
    });
  });

  it("keeps instances apart", async () => {
    const other = await server.createInstance("127.0.0.1");
    const theirs = ok(await protocolClient(PlatformEvents, "connect", other.baseUrl).call("SearchEvents", { limit: 1000 }, other.adminToken)) as Found;
    expect(theirs.result!.length).toBeGreaterThan(0);
    expect(theirs.result!.every((e) => e.instanceId === other.instanceId)).toBe(true);
    const owner = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
    expect(await search({ ctx: { instanceId: other.instanceId } }, owner.token)).toMatchObject({ ok: false, code: Code.NotFound });
  });

  it("lists what the filters may name", async () => {
    for (const protocol of PROTOCOLS) {
      const listed = ok(await protocolClient(PlatformEvents, protocol, server.baseUrl).call("ListEventTypes", {}, orgOwner.token)) as {
        types: string[];
        groups: string[];
      };
      expect(listed.types).toEqual(expect.arrayContaining(["user.human.added", "project.added", "signin.failed"]));
      expect(listed.groups).toEqual(expect.arrayContaining(["user", "user.grant", "signin"]));
    }
  });

  it("refuses what is not a position, a continuation or a limit", async () => {
    expect(await search({ after: "yesterday" })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await search({ continuation: "bm9wZQ" })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await search({ limit: 1001 })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await search({ filters: [{}] })).toMatchObject({ ok: false, code: Code.InvalidArgument });
  });

  it("never lists events older than the instance's audit log retention", async () => {
    const id = await newProject("retained");
    const found = () => search({ filters: [{ resource: { type: "project", id } }] }).then((r) => typesOf(ok(r) as Found));
    expect(await found()).toEqual(["project.added"]);
    const db = server.service.store.db;
    await db.updateTable("instances").set({ audit_log_retention_ms: 3_600_000 }).where("id", "=", server.instanceId).execute();
    try {
      // The event as if written two hours ago.
      await db
        .updateTable("events")
        .set({ created_at: new Date(Date.now() - 7_200_000) } as never)
        .where("aggregate_id", "=", id)
        .execute();
      expect(await found()).toEqual([]);
    } finally {
      await db.updateTable("instances").set({ audit_log_retention_ms: null }).where("id", "=", server.instanceId).execute();
    }
  });

  it("deletes sign-in events past the retention and keeps the events of resources", async () => {
    const db = server.service.store.db;
    const sequence = `events_pos_${server.instanceId.replaceAll("-", "")}`;
    const insert = (type: string, id: string, age: string) =>
      sql`insert into events (instance_id, aggregate_type, aggregate_id, sequence, event_type, payload, creator, instance_position, created_at)
          select ${server.instanceId}, ${type}, ${id}, n, ${type === "signin" ? "signin.failed" : "project.changed"}, '{}', 'test', n, now() - ${age}::interval
          from (select nextval(${sequence}::regclass) as n) s`.execute(db);
    await insert("signin", "swept-user", "2 minutes");
    await insert("signin", "kept-user", "10 seconds");
    await insert("project", "old-project", "2 minutes");
    const left = (id: string) =>
      db.selectFrom("events").select("event_type").where("instance_id", "=", server.instanceId).where("aggregate_id", "=", id).execute();
    await until("the old sign-in swept", async () => (await left("swept-user")).length === 0);
    expect(await left("kept-user")).toHaveLength(1);
    expect(await left("old-project")).toHaveLength(1);
  });

  describe.each(STREAM_PROTOCOLS)("WatchEvents over %s", (protocol) => {
    it("follows new events and resumes after the last position without missing one", async () => {
      const filters: JsonObject[] = [{ types: { groups: ["project"] } }, { organization: { orgId: orgB } }];
      const stream = await watch(protocol, server.baseUrl, server.adminToken, { filters });
      expect(stream.first.position).toMatch(/^\d+\.\d+$/);
      expect(stream.first.event).toBeUndefined();
      const first = await newProject(`watched-${protocol}-1`);
      const seen = await stream.nextEvent();
      expect(seen.event).toMatchObject({ type: "project.added", resource: { id: first } });
      stream.close();
      // Written while nobody listens: the resumed stream starts with it.
      const missed = await newProject(`watched-${protocol}-2`);
      const resumed = await watch(protocol, server.baseUrl, server.adminToken, { filters, after: seen.position! });
      expect(resumed.first.position).toBe(seen.position);
      const next = await resumed.nextEvent();
      expect(next.event).toMatchObject({ type: "project.added", resource: { id: missed } });
      // Quiet: heartbeats carry a position to resume from, at or after the last event.
      const beat = await resumed.next();
      expect(beat.event).toBeUndefined();
      expect(beat.position).toMatch(/^\d+\.\d+$/);
      resumed.close();
    });

    it("brings, after a search's position, what was written after the search", async () => {
      const id = await newProject(`searched-${protocol}`);
      const found = ok(await search({ filters: [{ resource: { type: "project", id } }] })) as Found & { position?: string };
      expect(typesOf(found)).toEqual(["project.added"]);
      expect(found.position).toMatch(/^\d+\.\d+$/);
      await projects().call("PatchProject", { id, project: { name: `searched-${protocol}-renamed` } }, server.adminToken);
      const stream = await watch(protocol, server.baseUrl, server.adminToken, { filters: [{ resource: { type: "project", id } }], after: found.position! });
      expect((await stream.nextEvent()).event).toMatchObject({ type: "project.changed", resource: { id } });
    });

    it("shows an organization's owner its organization's events only, and refuses the unauthorised", async () => {
      const stream = await watch(protocol, server.baseUrl, orgOwner.token, {});
      await newProject(`not-theirs-${protocol}`, server.adminToken, server.defaultOrgId);
      const theirs = await newProject(`theirs-${protocol}`);
      const next = await stream.nextEvent();
      expect(next.event).toMatchObject({ resource: { id: theirs }, organizationId: orgB });
      stream.close();
      const plain = await server.createUser({});
      await expect(watchEvents(protocol, server.baseUrl, plain.token, {})).rejects.toMatchObject({ code: String(Code.PermissionDenied) });
      await expect(watchEvents(protocol, server.baseUrl, server.adminToken, { after: "nowhere" })).rejects.toMatchObject({
        code: String(Code.InvalidArgument),
      });
    });
  });

  it("caps the open streams per instance", async () => {
    const streams = [];
    for (let i = 0; i < 4; i++) streams.push(await watch("grpc", server.baseUrl, server.adminToken, {}));
    await expect(watchEvents("rest", server.baseUrl, server.adminToken, {})).rejects.toMatchObject({ code: String(Code.ResourceExhausted), httpStatus: 429 });
    for (const stream of streams) stream.close();
    // Closed streams give their slots back.
    await expect(
      (async () => {
        for (let i = 0; ; i++) {
          try {
            return await watch("connect", server.baseUrl, server.adminToken, {});
          } catch (error) {
            if (!(error instanceof StreamError) || i > 50) throw error;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
      })().then((s) => (s.close(), "opened")),
    ).resolves.toBe("opened");
  });

  it.runIf(kind === "postgres")("never passes an event whose transaction commits after a later one's (PostgreSQL)", async () => {
    const stream = await watch("grpc", server.baseUrl, server.adminToken, { filters: [{ organization: { orgId: orgB } }] });
    const url = (server.config.database as { url: string }).url;
    const slow = new pg.Client({ connectionString: url });
    await slow.connect();
    try {
      // A writer that took its transaction id first and commits last.
      await slow.query("begin");
      await slow.query("select pg_current_xact_id()");
      const fast = await newProject("committed-first");
      await slow.query(
        `insert into events (instance_id, aggregate_type, aggregate_id, org_id, sequence, event_type, payload, creator, instance_position)
         values ($1, 'project', 'slow-writer', $2, 1, 'project.added', '{}', 'test', nextval($3::regclass))`,
        [server.instanceId, orgB, `events_pos_${server.instanceId.replaceAll("-", "")}`],
      );
      // The later transaction's event waits for the earlier one.
      await expect(stream.nextEvent(500)).rejects.toThrow(/no answer/);
      await slow.query("commit");
      expect((await stream.nextEvent()).event).toMatchObject({ resource: { id: "slow-writer" } });
      expect((await stream.nextEvent()).event).toMatchObject({ resource: { id: fast } });
    } finally {
      await slow.end();
      stream.close();
    }
  });

  it.runIf(kind === "postgres")("is not held back by a transaction of another database on the server (PostgreSQL)", async () => {
    const elsewhere = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await elsewhere.connect();
    try {
      await elsewhere.query("begin");
      await elsewhere.query("select pg_current_xact_id()");
      const id = await newProject("beside-another-database");
      expect(typesOf(ok(await search({ filters: [{ resource: { type: "project", id } }] })) as Found)).toEqual(["project.added"]);
    } finally {
      await elsewhere.query("rollback").catch(() => {});
      await elsewhere.end();
    }
  });

  it.runIf(kind === "postgres")("resumes after a position across a restart of the service (PostgreSQL)", async () => {
    const own = await startTestServer(kind, { PLATFORM_EVENTS_WATCH_POLL_INTERVAL: "50ms" });
    try {
      const create = (baseUrl: string, name: string) =>
        protocolClient(PlatformProjects, "grpc", baseUrl).call("CreateProject", { project: { name } }, own.adminToken).then(idOf);
      const filters: JsonObject[] = [{ resourceTypes: { types: ["project"] } }];
      const before = await watch("grpc", own.baseUrl, own.adminToken, { filters });
      const first = await create(own.baseUrl, "before-restart");
      const seen = await before.nextEvent();
      expect(seen.event).toMatchObject({ resource: { id: first } });
      before.close();
      await own.service.close();
      own.service = await startService(own.config, createLogger("silent"));
      const baseUrl = `http://localhost:${own.service.port}`;
      const written = await create(baseUrl, "after-restart");
      const after = await watch("grpc", baseUrl, own.adminToken, { filters, after: seen.position! });
      expect((await after.nextEvent()).event).toMatchObject({ resource: { id: written } });
    } finally {
      await own.close();
    }
  });
});
