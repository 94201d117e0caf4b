import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { LogCapture, scrape, startLoggedServer } from "./support.js";

const DEFAULT_PORT = 9090;

/** Another service on the host holding the default metrics port (or whatever already holds it). */
async function occupyDefaultPort(): Promise<() => Promise<void>> {
  const server = net.createServer((socket) => socket.destroy());
  const taken = await new Promise<boolean>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => (error.code === "EADDRINUSE" ? resolve(false) : reject(error)));
    server.listen(DEFAULT_PORT, "127.0.0.1", () => resolve(true));
  });
  return () => (taken ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve());
}

describe.each(DATABASE_KINDS)("the metrics port (%s)", (kind) => {
  let release: () => Promise<void>;
  beforeAll(async () => {
    release = await occupyDefaultPort();
  });
  afterAll(() => release?.());

  it("PLATFORM_METRICS_BIND unset and its default port taken: the service starts without metrics and warns", async () => {
    const logs = new LogCapture();
    const server = await startLoggedServer(kind, logs, { PLATFORM_METRICS_BIND: undefined });
    try {
      expect(server.service.metricsPort).toBeUndefined();
      const warning = logs.lines.find((l) => String(l.msg).includes("default metrics port is taken"));
      expect(warning).toMatchObject({ level: "warn", metricsBind: `127.0.0.1:${DEFAULT_PORT}` });
      expect((warning!.err as { code: string }).code).toBe("EADDRINUSE");
      // It serves: the bootstrapped instance answers.
      expect((await fetch(`${server.baseUrl}/ready`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("PLATFORM_METRICS_BIND set to a taken port: start-up fails", async () => {
    const logs = new LogCapture();
    await expect(startLoggedServer(kind, logs, { PLATFORM_METRICS_BIND: `127.0.0.1:${DEFAULT_PORT}` })).rejects.toMatchObject({ code: "EADDRINUSE" });
  });

  it("PLATFORM_METRICS_BIND unset and its default port free: metrics answer there", async () => {
    await release();
    try {
      const logs = new LogCapture();
      const server = await startLoggedServer(kind, logs, { PLATFORM_METRICS_BIND: undefined });
      try {
        expect(server.service.metricsPort).toBe(DEFAULT_PORT);
        expect((await scrape(DEFAULT_PORT)).status).toBe(200);
      } finally {
        await server.close();
      }
    } finally {
      release = await occupyDefaultPort();
    }
  });
});
