import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** How one path answers: a status and a body, or never (`hang`). */
export interface WebFile {
  status?: number;
  body?: string;
  hang?: boolean;
}

/**
 * A web server for tests on a free port of 127.0.0.1 that serves the files a test sets by
 * path (404 for any other path) and keeps the paths asked for.
 */
export class WebFiles {
  readonly files = new Map<string, WebFile>();
  readonly asked: string[] = [];
  port = 0;
  #server: Server = createServer((req, res) => {
    const path = req.url ?? "/";
    this.asked.push(path);
    const file = this.files.get(path) ?? { status: 404, body: "not found" };
    if (file.hang) return;
    res.writeHead(file.status ?? 200, { "content-type": "text/plain" }).end(file.body ?? "");
  });

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.port = (this.#server.address() as AddressInfo).port;
    return this.port;
  }

  close(): void {
    this.#server.closeAllConnections();
    this.#server.close();
  }
}
