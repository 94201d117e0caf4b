import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { h1, headerList } from "./raw-http.js";

const GET_TARGET = `/${PlatformActions.typeName}/GetTarget`;
const ALLOWED = "https://app.example";
const OTHER = "https://evil.example";

describe.each(DATABASE_KINDS)("CORS restricted by PLATFORM_CORS_ORIGINS (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_CORS_ORIGINS: `${ALLOWED}, https://other-app.example` });
  });
  afterAll(() => server?.close());

  const preflight = (origin: string) =>
    h1(`${server.baseUrl}${GET_TARGET}`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" },
    });
  const call = (origin: string) =>
    h1(`${server.baseUrl}${GET_TARGET}`, {
      method: "POST",
      headers: { origin, "content-type": "application/json", authorization: `Bearer ${server.adminToken}` },
      body: JSON.stringify({ id: "nope" }),
    });

  it("refuses the preflight of an origin not on the list with 403", async () => {
    const res = await preflight(OTHER);
    expect(res.status).toBe(403);
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
    expect(res.headers["access-control-allow-methods"]).toBeUndefined();
  });

  it("answers the preflight of an allowed origin by echoing it, with Vary: Origin", async () => {
    for (const origin of [ALLOWED, "https://other-app.example"]) {
      const res = await preflight(origin);
      expect(res.status).toBe(204);
      expect(res.headers["access-control-allow-origin"]).toBe(origin);
      expect(headerList(res.headers.vary).has("origin")).toBe(true);
      expect(headerList(res.headers["access-control-allow-headers"]).has("authorization")).toBe(true);
    }
  });

  it("echoes an allowed origin on a normal request, with Vary: Origin", async () => {
    const res = await call(ALLOWED);
    expect(res.status).toBe(404);
    expect(res.headers["access-control-allow-origin"]).toBe(ALLOWED);
    expect(headerList(res.headers.vary).has("origin")).toBe(true);
    expect(headerList(res.headers["access-control-expose-headers"]).has("x-request-id")).toBe(true);
  });

  it("gives a disallowed origin's normal request no CORS headers (the browser then hides the answer)", async () => {
    const res = await call(OTHER);
    expect(res.status).toBe(404);
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
    expect(res.headers["access-control-expose-headers"]).toBeUndefined();
  });

  it("leaves requests without an Origin alone", async () => {
    const res = await h1(`${server.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
  });
});
