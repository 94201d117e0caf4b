/**
 * Messages (issue 19, section 6), two figures measured in one run on PostgreSQL:
 *
 * 1. Emails sent per second through a local SMTP server (the `smtp-server` package on
 *    127.0.0.1, no TLS, no AUTH) with one and with two service processes, as a ratio to
 *    nodemailer sending the same emails to the same server from a bare loop, with as many
 *    sends in flight and as many pooled connections as the processes have
 *    (PLATFORM_NOTIFICATION_CONCURRENCY and PLATFORM_SMTP_MAX_CONNECTIONS each). The backlog
 *    of verification emails is written while the workers are asleep (a poll interval of an
 *    hour); the clock runs from the first email the server takes to the last (for the
 *    service, the first after every process is ready: one still starting competes for the CPU).
 * 2. What a pending message costs CreateUser: humans created with an unverified email (a
 *    code and a message written with the user) against humans created with
 *    `email.isVerified: true` (neither), as a ratio, in alternating rounds. Both import a
 *    password hash, so that hashing a password (tens of ms) does not hide the difference;
 *    the workers are asleep, so the messages stay pending and only writing them is measured.
 *
 * Knobs: BENCH_MESSAGES (emails per drain, default 2000), BENCH_SECONDS (each CreateUser
 * round, default 5), BENCH_NOTIFICATION_CONCURRENCY (10), BENCH_SMTP_CONNECTIONS (3),
 * BENCH_DATABASE_URL.
 */
import os from "node:os";
import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import nodemailer from "nodemailer";
import { SMTPServer } from "smtp-server";
import { createPasswordHasher } from "../src/crypto/passwords.js";
import { createBenchDatabase } from "./database.js";
import type { Created } from "./http-json.js";
import { loadHttp1 } from "./load-http1.js";
import type { Measurement } from "./measure.js";
import { cleanupStack } from "./processes.js";
import { machineLine } from "./report.js";
import { callApi, startPeer, startService, type ServiceUnderTest } from "./service.js";
import { ARGON2, DATABASE_URL, HOST, MEASURE_SECONDS, USER_PASSWORD, WARMUP_SECONDS } from "./settings.js";

function count(name: string, fallback: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 2 || value > max) throw new Error(`${name} must be a whole number from 2 to ${max}, not "${raw}"`);
  return value;
}

const MESSAGES = count("BENCH_MESSAGES", 2000, 100_000);
const CONCURRENCY = count("BENCH_NOTIFICATION_CONCURRENCY", 10, 1000);
const SMTP_CONNECTIONS = count("BENCH_SMTP_CONNECTIONS", 3, 100);
const ROUNDS = 2;
const SENDER = { address: "noreply@bench.example", name: "Bench" };

const log = (line: string) => process.stderr.write(`${line}\n`);

/** The SMTP server both senders talk to: it takes every message and notes when (performance.now()). */
async function startSmtp(): Promise<{ port: number; times: number[]; raws: string[]; close(): Promise<void> }> {
  const times: number[] = [];
  const raws: string[] = [];
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    authOptional: true,
    logger: false,
    // The service's and nodemailer's idle connections stay open between rounds.
    socketTimeout: 300_000,
    onData(stream, _session, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => raws.length === 0 && chunks.push(chunk));
      stream.on("end", () => {
        times.push(performance.now());
        if (raws.length === 0) raws.push(Buffer.concat(chunks).toString("utf8"));
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return { port: (server.server.address() as AddressInfo).port, times, raws, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Emails per second over the times given: first to last. */
function rateOf(taken: number[]): number {
  if (taken.length < 2) throw new Error(`only ${taken.length} emails to time: raise BENCH_MESSAGES`);
  return (taken.length - 1) / ((taken.at(-1)! - taken[0]!) / 1000);
}

async function waitForCount(times: number[], target: number, what: string): Promise<void> {
  const deadline = Date.now() + 600_000;
  while (times.length < target) {
    if (Date.now() > deadline) throw new Error(`${what}: only ${times.length} of ${target} emails arrived`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Sample {
  subject: string;
  text: string;
  html: string;
  replyTo: string | undefined;
}

/** A human with an imported password hash: no hashing in the request. */
const human = (username: string, passwordHash: string, verified: boolean) => ({
  username,
  human: {
    profile: { givenName: "Bench", familyName: "User" },
    email: { address: `${username}@bench.example`, isVerified: verified },
    hashedPassword: passwordHash,
  },
});

/** `count` users with an unverified email, eight at a time: one verification email each. */
async function backlog(port: number, headers: ServiceUnderTest["headers"], tag: string, passwordHash: string): Promise<void> {
  for (let start = 0; start < MESSAGES; start += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, MESSAGES - start) }, (_, i) =>
        callApi(port, headers, "POST", "/resources/v3alpha/users", human(`bench-${tag}-${start + i}`, passwordHash, false), 201),
      ),
    );
  }
}

/**
 * nodemailer alone: `MESSAGES` emails with the service's parts, sender and reply-to, each to
 * its own address, `inFlight` at a time over `pools` pooled transports of SMTP_CONNECTIONS
 * connections (one per service process, as the service keeps one per provider).
 */
async function baseline(port: number, sample: Sample, pools: number, inFlight: number, tag: string): Promise<void> {
  const transports = Array.from({ length: pools }, () =>
    nodemailer.createTransport({ host: HOST, port, secure: false, ignoreTLS: true, pool: true, maxConnections: SMTP_CONNECTIONS }),
  );
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async (_, lane) => {
      const transport = transports[lane % pools]!;
      for (let n = next++; n < MESSAGES; n = next++) {
        await transport.sendMail({
          from: SENDER,
          replyTo: sample.replyTo,
          to: `bench-${tag}-${n}@bench.example`,
          subject: sample.subject,
          text: sample.text,
          html: sample.html,
        });
      }
    }),
  );
  for (const t of transports) t.close();
}

/**
 * The backlog drained by `processes` processes: the emails per second from the first the server
 * took after every process was ready (one that is still starting competes for the CPU) to the
 * last, and how many that counts.
 */
async function drain(
  processes: number,
  databaseUrl: string,
  headers: ServiceUnderTest["headers"],
  smtp: Awaited<ReturnType<typeof startSmtp>>,
  passwordHash: string,
): Promise<{ rate: number; timed: number }> {
  const seeding = await startPeer(databaseUrl, asleep);
  await backlog(seeding.port, headers, `p${processes}`, passwordHash);
  await seeding.stop();
  const before = smtp.times.length;
  const services = await Promise.all(Array.from({ length: processes }, () => startPeer(databaseUrl, awake)));
  const allReady = performance.now();
  await waitForCount(smtp.times, before + MESSAGES, `${processes} process(es)`);
  await Promise.all(services.map((s) => s.stop()));
  const timed = smtp.times.slice(before, before + MESSAGES).filter((t) => t >= allReady);
  return { rate: rateOf(timed), timed: timed.length };
}

/** CreateUser over REST for `seconds`, CONNECTIONS calls in flight, each a new human. */
function createUsers(
  port: number,
  headers: ServiceUnderTest["headers"],
  tag: string,
  verified: boolean,
  passwordHash: string,
  seconds: number,
): Promise<Measurement> {
  return loadHttp1(
    port,
    (n) => ({
      method: "POST",
      path: "/resources/v3alpha/users",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(human(`cu-${tag}-${n}`, passwordHash, verified)),
    }),
    seconds,
  );
}

const common = {
  PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
  PLATFORM_NOTIFICATION_CONCURRENCY: String(CONCURRENCY),
  PLATFORM_SMTP_MAX_CONNECTIONS: String(SMTP_CONNECTIONS),
};
const asleep = { ...common, PLATFORM_NOTIFICATION_POLL_INTERVAL: "1h" };
const awake = { ...common, PLATFORM_NOTIFICATION_POLL_INTERVAL: "50ms" };

const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(3) : "n/a");

async function main(): Promise<void> {
  const { cleanups, cleanup } = cleanupStack(log);
  try {
    const loadAtStart = os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
    const smtp = await startSmtp();
    cleanups.push(() => smtp.close());
    const database = await createBenchDatabase(DATABASE_URL);
    cleanups.push(() => database.drop());
    const passwordHash = await createPasswordHasher(ARGON2).hash(USER_PASSWORD);

    // The instance's SMTP provider, and one email as the service sends it, for the baseline to send alike.
    const first = await startService(database.url, awake);
    cleanups.push(() => first.stop());
    const headers = first.headers;
    const provider = (await callApi(
      first.port,
      headers,
      "POST",
      "/resources/v3alpha/smtp_providers",
      {
        description: "bench relay",
        smtp: {
          host: HOST,
          port: smtp.port,
          tls: "SMTP_TLS_NONE",
          senderAddress: SENDER.address,
          senderName: SENDER.name,
          replyToAddress: "help@bench.example",
        },
      },
      201,
    )) as Created;
    await callApi(first.port, headers, "POST", `/resources/v3alpha/smtp_providers/${provider.details.id}/_activate`, {}, 200);
    await callApi(first.port, headers, "POST", "/resources/v3alpha/users", human("bench-sample", passwordHash, false), 201);
    await waitForCount(smtp.times, 1, "the sample email");
    const parsed = await simpleParser(smtp.raws[0]!);
    const sample: Sample = {
      subject: parsed.subject ?? "",
      text: parsed.text ?? "",
      html: typeof parsed.html === "string" ? parsed.html : "",
      replyTo: parsed.replyTo?.text,
    };
    if (!sample.subject || !sample.text || !sample.html) throw new Error("the sample email lacks a subject, a text or an HTML part");
    await first.stop();

    const sendRows: string[] = [];
    for (const processes of [1, 2]) {
      log(`baseline: nodemailer, ${processes * CONCURRENCY} in flight over ${processes * SMTP_CONNECTIONS} connections, ${MESSAGES} emails…`);
      const from = smtp.times.length;
      await baseline(smtp.port, sample, processes, processes * CONCURRENCY, `b${processes}`);
      const base = rateOf(smtp.times.slice(from, from + MESSAGES));
      log(`${processes} process(es), ${MESSAGES} emails…`);
      const { rate, timed } = await drain(processes, database.url, headers, smtp, passwordHash);
      sendRows.push(
        `| ${processes} | ${processes * CONCURRENCY} | ${processes * SMTP_CONNECTIONS} | ${timed} | ${Math.round(rate)} | ${Math.round(base)} | ${ratio(rate, base)} |`,
      );
    }

    // CreateUser with and without a message, alternating, after a warm-up of each.
    const service = await startPeer(database.url, asleep);
    cleanups.push(() => service.stop());
    const totals = {
      pending: { ok: 0, seconds: 0, errors: 0, p50: [] as number[], p99: [] as number[] },
      verified: { ok: 0, seconds: 0, errors: 0, p50: [] as number[], p99: [] as number[] },
    };
    for (const verified of [false, true]) await createUsers(service.port, headers, `warm-${verified}`, verified, passwordHash, WARMUP_SECONDS);
    for (let round = 0; round < ROUNDS; round++) {
      for (const verified of [false, true]) {
        log(`CreateUser round ${round + 1}/${ROUNDS}, ${verified ? "verified email (no message)" : "unverified email (a pending message)"}…`);
        const m = await createUsers(service.port, headers, `r${round}-${verified}`, verified, passwordHash, MEASURE_SECONDS);
        if (m.ok === 0) throw new Error(`no CreateUser succeeded (${m.errors} errors)`);
        const t = totals[verified ? "verified" : "pending"];
        t.ok += m.ok;
        t.seconds += m.ok / m.requestsPerSecond;
        t.errors += m.errors;
        t.p50.push(m.p50Ms);
        t.p99.push(m.p99Ms);
      }
    }
    await service.stop();
    const perSecond = (t: typeof totals.pending) => t.ok / t.seconds;
    const worst = (values: number[]) => Math.max(...values).toFixed(1);

    const report = [
      `# Notifications benchmark`,
      "",
      `${machineLine()} (load average at the start: ${loadAtStart}). PostgreSQL, SMTP server on ${HOST} without TLS.`,
      "",
      `Emails sent, ${MESSAGES} verification emails per run; baseline: nodemailer sending the same emails from a bare loop, same sends in flight and connections:`,
      "",
      "| processes | sends in flight | SMTP connections | emails timed (after all were ready) | service emails/s | baseline emails/s | ratio |",
      "|---|---|---|---|---|---|---|",
      ...sendRows,
      "",
      `CreateUser (REST, 64 connections, ${ROUNDS} rounds of ${MEASURE_SECONDS} s each, imported password hash):`,
      "",
      "| humans created with | req/s | worst p50 ms | worst p99 ms | errors |",
      "|---|---|---|---|---|",
      `| an unverified email (a pending message) | ${Math.round(perSecond(totals.pending))} | ${worst(totals.pending.p50)} | ${worst(totals.pending.p99)} | ${totals.pending.errors} |`,
      `| a verified email (no message) | ${Math.round(perSecond(totals.verified))} | ${worst(totals.verified.p50)} | ${worst(totals.verified.p99)} | ${totals.verified.errors} |`,
      "",
      `Ratio with a message ÷ without: ${ratio(perSecond(totals.pending), perSecond(totals.verified))}.`,
    ].join("\n");
    process.stdout.write(`${report}\n`);
  } finally {
    await cleanup();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
