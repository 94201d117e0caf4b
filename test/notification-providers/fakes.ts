import { EventEmitter, once } from "node:events";
import { writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { simpleParser, type ParsedMail } from "mailparser";
import { generate } from "selfsigned";
import { SMTPServer, type SMTPServerAuthentication, type SMTPServerSession } from "smtp-server";

export interface Certificates {
  /** The CA's certificate, written to a file for PLATFORM_SMTP_CA_PATH. */
  caPath: string;
  /** A server certificate for localhost and 127.0.0.1, signed by that CA. */
  cert: string;
  key: string;
}

/** A private CA and a server certificate it signed, made afresh for a test run. */
export async function testCertificates(dir: string): Promise<Certificates> {
  const ca = await generate([{ name: "commonName", value: "Notification test CA" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const leaf = await generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
        ],
      },
    ],
  });
  const caPath = join(dir, "smtp-ca.pem");
  await writeFile(caPath, ca.cert);
  return { caPath, cert: leaf.cert, key: leaf.private };
}

/** A message the SMTP server accepted. */
export interface Delivered {
  from: string;
  to: string[];
  /** The authenticated user, and how. */
  user: string | undefined;
  method: string | undefined;
  /** Whether the session was under TLS (STARTTLS or implicit) when the message came. */
  secure: boolean;
  raw: string;
  mail: ParsedMail;
  /** When the server accepted it (Date.now()). */
  at: number;
}

export interface SmtpServerOptions {
  certificates: Certificates;
  /** User names and their passwords. */
  users: Record<string, string>;
  authMethods?: ("PLAIN" | "LOGIN")[];
  /** TLS from the first byte instead of STARTTLS. */
  implicitTls?: boolean;
  /** Holds each message this long before accepting it: a relay slow enough that several senders overlap. */
  acceptDelayMs?: number;
}

/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package): STARTTLS with the test CA's
 * certificate, AUTH only under TLS, refusing `refused@…` recipients with 550 and `later@…`
 * with 451. It keeps every message and counts connections.
 */
export class TestSmtpServer extends EventEmitter {
  readonly delivered: Delivered[] = [];
  connections = 0;
  #server: SMTPServer;

  constructor(options: SmtpServerOptions) {
    super();
    this.#server = new SMTPServer({
      secure: options.implicitTls ?? false,
      key: options.certificates.key,
      cert: options.certificates.cert,
      authMethods: options.authMethods ?? ["PLAIN", "LOGIN"],
      allowInsecureAuth: false,
      logger: false,
      onConnect: (_session, done) => {
        this.connections++;
        done();
      },
      onAuth: (auth: SMTPServerAuthentication, _session, done) => {
        if (auth.username !== undefined && options.users[auth.username] === auth.password) return done(null, { user: auth.username });
        done(new Error("Invalid username or password"));
      },
      onRcptTo: (address, _session, done) => {
        if (address.address.startsWith("refused@")) return done(Object.assign(new Error("5.1.1 No such mailbox here"), { responseCode: 550 }));
        if (address.address.startsWith("later@")) return done(Object.assign(new Error("4.2.1 Mailbox busy, try later"), { responseCode: 451 }));
        done();
      },
      onData: (stream, session: SMTPServerSession, done) => {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", async () => {
          if (options.acceptDelayMs) await new Promise((resolve) => setTimeout(resolve, options.acceptDelayMs));
          const raw = Buffer.concat(chunks).toString("utf8");
          this.delivered.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            user: session.user as string | undefined,
            method: (session as { transmissionType?: string }).transmissionType,
            secure: session.secure,
            raw,
            mail: await simpleParser(raw),
            at: Date.now(),
          });
          done();
          this.emit("delivered");
        });
      },
    });
  }

  /** Listens on `port` (a free one by default: a relay that comes up where one was down takes the old port). */
  async start(port = 0): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(port, "127.0.0.1", resolve));
    return (this.#server.server.address() as AddressInfo).port;
  }

  /** Waits for the n-th delivered message (1-based) and returns it. */
  async nth(n: number): Promise<Delivered> {
    while (this.delivered.length < n) await once(this, "delivered");
    return this.delivered[n - 1]!;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** A request Twilio's fake received. */
export interface TwilioCall {
  path: string;
  contentType: string | undefined;
  authorization: string | undefined;
  form: URLSearchParams;
}

/**
 * Twilio's Messages API, faked on 127.0.0.1: it keeps every call and answers 201, or what
 * `answer` says (Twilio's error JSON for a status).
 */
export class TwilioFake {
  readonly calls: TwilioCall[] = [];
  answer: ((call: TwilioCall) => { status: number; body: unknown }) | undefined;
  #server: Server = createServer(
    (req, res) => void this.#handle(req).then(({ status, body }) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))),
  );

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async #handle(req: IncomingMessage) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const call = {
      path: req.url ?? "",
      contentType: req.headers["content-type"],
      authorization: req.headers.authorization,
      form: new URLSearchParams(Buffer.concat(chunks).toString("utf8")),
    };
    this.calls.push(call);
    return this.answer?.(call) ?? { status: 201, body: { sid: "SM00000000000000000000000000000000", status: "queued" } };
  }

  close() {
    this.#server.closeAllConnections();
    this.#server.close();
  }
}
