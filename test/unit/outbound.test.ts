import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OutboundClient, OutboundError, isInternalAddress } from "../../src/http/outbound.js";

/** The outbound client against a real local server; loopback is internal, so most tests allow it. */
describe("outbound HTTP client", () => {
  let server: http.Server;
  let base: string;
  let connections = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/slow") return void setTimeout(() => res.end("late"), 2_000);
      if (req.url === "/big") return void res.end(Buffer.alloc(2_000, 97));
      if (req.url === "/redirect") {
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
        return void res.end();
      }
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "x-seen": req.headers["x-test"] ?? "" });
        res.end(JSON.stringify({ method: req.method, body }));
      });
    });
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const failure = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (error) {
      expect(error).toBeInstanceOf(OutboundError);
      return (error as OutboundError).failure;
    }
    throw new Error("the call succeeded");
  };

  it("classifies addresses: loopback, private, link-local, shared, metadata and their IPv6 forms are internal", () => {
    for (const internal of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.100.100.200",
      "0.0.0.0",
      "::1",
      "::",
      "fe80::1",
      "fd00:ec2::254",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "64:ff9b::a00:1",
      "224.0.0.1",
    ]) {
      expect(isInternalAddress(internal), internal).toBe(true);
    }
    for (const external of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "172.32.0.1", "not an address"]) {
      expect(isInternalAddress(external), external).toBe(false);
    }
  });

  it("refuses internal addresses by default: literals before connecting, names after resolving them", async () => {
    const client = new OutboundClient({ allowPrivate: false, maxResponseBytes: 1_000 });
    try {
      for (const url of [
        base,
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/",
        "http://10.0.0.1/",
      ]) {
        expect(await failure(client.request(url, { timeoutMs: 1_000 })), url).toBe("refused");
      }
      // localhost is a name: it is refused for what it resolves to.
      const port = (server.address() as AddressInfo).port;
      expect(await failure(client.request(`http://localhost:${port}/`, { timeoutMs: 1_000 }))).toBe("refused");
      expect(await failure(client.request("ftp://example.com/", { timeoutMs: 1_000 }))).toBe("invalid_url");
      expect(await failure(client.request("/relative", { timeoutMs: 1_000 }))).toBe("invalid_url");
    } finally {
      client.close();
    }
  });

  it("calls, bounded in time and size, follows no redirect and reuses its connection", async () => {
    const client = new OutboundClient({ allowPrivate: true, maxResponseBytes: 1_000 });
    try {
      const before = connections;
      const res = await client.request(`${base}/echo`, {
        method: "POST",
        headers: { "x-test": "yes", "content-type": "application/json" },
        body: '{"a":1}',
        timeoutMs: 1_000,
      });
      expect(res.status).toBe(200);
      expect(res.headers["x-seen"]).toBe("yes");
      expect(JSON.parse(res.body.toString())).toEqual({ method: "POST", body: '{"a":1}' });
      await client.request(`${base}/again`, { timeoutMs: 1_000 });
      expect(connections - before, "one kept-alive connection for both calls").toBe(1);

      const redirect = await client.request(`${base}/redirect`, { timeoutMs: 1_000 });
      expect(redirect.status).toBe(302);

      const started = Date.now();
      expect(await failure(client.request(`${base}/slow`, { timeoutMs: 200 }))).toBe("timeout");
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(await failure(client.request(`${base}/big`, { timeoutMs: 1_000 }))).toBe("too_large");
      expect(await failure(client.request("http://127.0.0.1:1/", { timeoutMs: 1_000 }))).toBe("network");
    } finally {
      client.close();
    }
  });

  it("finds a name's addresses through the caller's resolver when given one, under the same private-address policy", async () => {
    const port = (server.address() as AddressInfo).port;
    const asked: string[] = [];
    const resolve = async (hostname: string) => {
      asked.push(hostname);
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const open = new OutboundClient({ allowPrivate: true, maxResponseBytes: 1_000 });
    const guarded = new OutboundClient({ allowPrivate: false, maxResponseBytes: 1_000 });
    try {
      // A name no system resolver knows reaches the server through the one given.
      const res = await open.request(`http://only-mine.invalid:${port}/echo`, { timeoutMs: 1_000, resolve });
      expect(res.status).toBe(200);
      expect(asked).toEqual(["only-mine.invalid"]);
      await expect(guarded.request(`http://only-mine.invalid:${port}/echo`, { timeoutMs: 1_000, resolve })).rejects.toMatchObject({
        failure: "refused",
        message: "only-mine.invalid resolves to the internal address 127.0.0.1",
      });
      const nowhere = async () => Promise.reject(Object.assign(new Error("nowhere.invalid has no address"), { code: "ENOTFOUND" }));
      await expect(open.request(`http://nowhere.invalid:${port}/`, { timeoutMs: 1_000, resolve: nowhere })).rejects.toMatchObject({
        failure: "network",
        message: "nowhere.invalid has no address",
      });
    } finally {
      open.close();
      guarded.close();
    }
  });
});
