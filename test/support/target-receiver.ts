import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { JsonObject } from "@bufbuild/protobuf";

/** One call a target received. */
export interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  raw: string;
  body: JsonObject;
  /** When it arrived (Date.now()). */
  at: number;
}

/** How to answer: a status and JSON (or raw text), after a delay, or never (`hang`). */
interface Reply {
  status?: number;
  json?: unknown;
  raw?: string;
  delayMs?: number;
  hang?: boolean;
}

export type Answer = (call: Received) => Reply | Promise<Reply>;

/**
 * An action target for tests: a real HTTP server on 127.0.0.1 (the service needs
 * PLATFORM_OUTBOUND_ALLOW_PRIVATE=true to reach it) that keeps every call and answers per
 * path, 200 with `{}` unless told otherwise.
 */
export class Receiver {
  readonly calls: Received[] = [];
  readonly answers = new Map<string, Answer>();
  #server: Server = createServer((req, res) => void this.#handle(req, res));

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  callsTo(path: string): Received[] {
    return this.calls.filter((c) => c.path === path);
  }

  async #handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const call: Received = { path: req.url ?? "/", headers: req.headers, raw, body: JSON.parse(raw) as JsonObject, at: Date.now() };
    this.calls.push(call);
    const fallback: Answer = () => ({});
    const reply = await (this.answers.get(call.path) ?? fallback)(call);
    if (reply.hang) return;
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    res.writeHead(reply.status ?? 200, { "content-type": "application/json" }).end(reply.raw ?? JSON.stringify(reply.json ?? {}));
  }

  close() {
    this.#server.closeAllConnections();
    this.#server.close();
  }
}
