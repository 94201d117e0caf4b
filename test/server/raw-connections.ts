import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type http2 from "node:http2";
import net from "node:net";
import { join } from "node:path";
import tls from "node:tls";

/** Where raw connections go: cleartext, or TLS with a CA and an ALPN offer. */
export interface Target {
  port: number;
  tls?: { ca: Buffer; alpn?: string[] };
}

/** A socket the test writes by hand; records what came back and when the server closed it. */
export interface RawConnection {
  socket: net.Socket;
  /** performance.now() just before connecting: the server accepted the connection after it. */
  startedAt: number;
  /** performance.now() once connected (TLS: handshake done). */
  openedAt: number;
  received(): string;
  /** Resolves with performance.now() when the socket closes. */
  closed: Promise<number>;
}

/**
 * A raw connection. With `silentMs` it sends nothing, not even a TLS hello, until that long
 * after `startedAt`: in cleartext it resolves then, for the test to send the first bytes; over
 * TLS the handshake starts then, and it resolves once the handshake is done or the server has
 * closed the connection (a late handshake may meet the server's deadline: that is a result).
 */
export async function openRaw(target: Target, opts: { silentMs?: number } = {}): Promise<RawConnection> {
  const startedAt = performance.now();
  const tlsOptions = target.tls && { servername: "localhost", ca: target.tls.ca, ALPNProtocols: target.tls.alpn };
  let socket: net.Socket;
  let closed: Promise<number>;
  if (opts.silentMs === undefined) {
    socket = tlsOptions ? tls.connect({ port: target.port, host: "127.0.0.1", ...tlsOptions }) : net.connect(target.port, "127.0.0.1");
    closed = closedAt(socket);
  } else {
    const tcp = net.connect(target.port, "127.0.0.1");
    closed = closedAt(tcp);
    await settled(tcp, "connect", false);
    tcp.on("error", () => {});
    await sleep(startedAt + opts.silentMs - performance.now());
    socket = tcp;
    if (tlsOptions && !tcp.destroyed) {
      socket = tls.connect({ socket: tcp, ...tlsOptions });
      closed = closedAt(socket);
    }
  }
  let data = "";
  socket.on("data", (chunk: Buffer) => (data += chunk.toString("latin1")));
  if (socket.connecting || tlsOptions) await settled(socket, tlsOptions ? "secureConnect" : "connect", opts.silentMs !== undefined);
  // Later errors (the server closing mid-write) show as the close the tests wait for.
  socket.on("error", () => {});
  return { socket, startedAt, openedAt: performance.now(), received: () => data, closed };
}

const closedAt = (socket: net.Socket) => new Promise<number>((done) => socket.once("close", () => done(performance.now())));

/** Resolves on `event`; on an error rejects, or with `closeIsResult` waits for the close and resolves. */
function settled(socket: net.Socket, event: string, closeIsResult: boolean): Promise<void> {
  if (socket.destroyed) return closeIsResult ? Promise.resolve() : Promise.reject(new Error("closed"));
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => {
      socket.off(event, connected);
      if (closeIsResult) socket.once("close", () => resolve());
      else reject(error);
    };
    const connected = () => {
      socket.off("error", failed);
      resolve();
    };
    socket.once(event, connected);
    socket.once("error", failed);
  });
}

/** Resolves with the elapsed ms since `from` when `closed` resolves, or with Infinity after `limitMs`. */
export async function closedWithin(closed: Promise<number>, from: number, limitMs: number): Promise<number> {
  const timeout = new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), limitMs).unref());
  const at = await Promise.race([closed, timeout]);
  return at - from;
}

/** A certificate for localhost in `dir`, as test/server/tls.test.ts makes one. */
export function selfSignedCert(dir: string): { certPath: string; keyPath: string; ca: Buffer } {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost",
    ],
    { stdio: "ignore" },
  );
  return { certPath: join(dir, "cert.pem"), keyPath: join(dir, "key.pem"), ca: readFileSync(join(dir, "cert.pem")) };
}

/** A health Watch on an open session, by hand; resolves once the first status arrived. */
export function watch(session: http2.ClientHttp2Session): Promise<http2.ClientHttp2Stream> {
  const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Watch", "content-type": "application/grpc", te: "trailers" });
  stream.on("error", () => {});
  stream.end(Buffer.alloc(5));
  return new Promise((resolve) => stream.once("data", () => resolve(stream)));
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` holds or `timeoutMs` passes; returns whether it held. */
export async function eventually(check: () => boolean, timeoutMs = 3_000): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

// --- HTTP/2 frames by hand: a client that ignores the server's SETTINGS, as an attacker would.

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, GOAWAY: 7 } as const;
export const FLAG = { END_STREAM: 1, END_HEADERS: 4 } as const;

export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** HPACK literal fields without indexing and without Huffman: valid for names and values under 127 bytes. */
export function headerBlock(headers: Record<string, string>): Buffer {
  const literal = (s: string) => Buffer.concat([Buffer.from([s.length]), Buffer.from(s, "latin1")]);
  return Buffer.concat(Object.entries(headers).map(([name, value]) => Buffer.concat([Buffer.from([0]), literal(name), literal(value)])));
}

/** A gRPC request for grpc.health.v1.Health/Watch of the whole server: headers, then an empty message. */
export function watchRequest(streamId: number, authority: string): Buffer {
  const headers = headerBlock({
    ":method": "POST",
    ":scheme": "http",
    ":path": "/grpc.health.v1.Health/Watch",
    ":authority": authority,
    "content-type": "application/grpc",
    te: "trailers",
  });
  return Buffer.concat([frame(FRAME.HEADERS, FLAG.END_HEADERS, streamId, headers), frame(FRAME.DATA, FLAG.END_STREAM, streamId, Buffer.alloc(5))]);
}

/** What the server sent on a raw HTTP/2 connection, frame by frame (header blocks are not decoded). */
export class FrameReader {
  /** Stream id → RST_STREAM error code. */
  readonly resets = new Map<number, number>();
  readonly headers = new Set<number>();
  goaway: { lastStreamId: number; code: number } | undefined;
  private buffer = Buffer.alloc(0);

  constructor(socket: net.Socket) {
    socket.on("data", (chunk: Buffer) => this.push(chunk));
  }

  /** Streams the server answered, with headers or a reset. */
  answered(): number {
    return new Set([...this.headers, ...this.resets.keys()]).size;
  }

  private push(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= 9) {
      const length = this.buffer.readUIntBE(0, 3);
      if (this.buffer.length < 9 + length) return;
      const type = this.buffer[3];
      const id = this.buffer.readUInt32BE(5) & 0x7fffffff;
      const payload = this.buffer.subarray(9, 9 + length);
      this.buffer = this.buffer.subarray(9 + length);
      if (type === FRAME.RST_STREAM) this.resets.set(id, payload.readUInt32BE(0));
      else if (type === FRAME.HEADERS) this.headers.add(id);
      else if (type === FRAME.GOAWAY) this.goaway = { lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, code: payload.readUInt32BE(4) };
    }
  }
}
