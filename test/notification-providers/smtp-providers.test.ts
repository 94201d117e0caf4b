import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { comparable, PROTOCOL_TOKEN } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage } from "../support/results.js";
import { serviceClient } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { testCertificates, TestSmtpServer, type Certificates } from "./fakes.js";
import { PASSWORD, smtpSettings } from "./requests.js";

describe.each(DATABASE_KINDS)("PlatformSMTPProviders with a real SMTP server (%s)", (kind) => {
  let dir: string;
  let certificates: Certificates;
  let smtp: TestSmtpServer;
  let port: number;
  let server: TestServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "smtp-providers-"));
    certificates = await testCertificates(dir);
    smtp = new TestSmtpServer({ certificates, users: { mailer: PASSWORD } });
    port = await smtp.start();
    server = await startTestServer(kind, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true", PLATFORM_SMTP_CA_PATH: certificates.caPath });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Every RPC once, on its own provider per protocol. */
  async function scenario(protocol: Protocol) {
    const client = protocolClient(PlatformSMTPProviders, protocol, server.baseUrl);
    const call = (method: string, req: JsonObject) => client.call(method, req, server.adminToken);
    const description = `mail-${PROTOCOL_TOKEN[protocol]}`;
    const created = await call("CreateSMTPProvider", { provider: { description, smtp: smtpSettings(port) } });
    const id = okMessage(created).details.id as string;
    const results: Record<string, CallResult> = {
      created,
      get: await call("GetSMTPProvider", { id }),
      search: await call("SearchSMTPProviders", { filters: [{ description: { description, method: "TEXT_FILTER_METHOD_EQUALS" } }] }),
      tested: await call("TestSMTPProvider", { id, test: { receiver: `to-${PROTOCOL_TOKEN[protocol]}@mail.example` } }),
      patched: await call("PatchSMTPProvider", { id, provider: { smtp: { senderName: "Platform Team" } } }),
      unchanged: await call("PatchSMTPProvider", { id, provider: { description } }),
      activated: await call("ActivateSMTPProvider", { id }),
      afterActivation: await call("GetSMTPProvider", { id }),
      activatedAgain: await call("ActivateSMTPProvider", { id }),
      deactivated: await call("DeactivateSMTPProvider", { id }),
      deactivatedAgain: await call("DeactivateSMTPProvider", { id }),
      wrongPassword: await call("PatchSMTPProvider", { id, provider: { smtp: { password: "not-the-password" } } }),
      refusedAuth: await call("TestSMTPProvider", { id, test: { receiver: "someone@mail.example" } }),
      deleted: await call("DeleteSMTPProvider", { id }),
      getDeleted: await call("GetSMTPProvider", { id }),
      deleteAgain: await call("DeleteSMTPProvider", { id }),
      testDeleted: await call("TestSMTPProvider", { id, test: { receiver: "someone@mail.example" } }),
      invalid: await call("CreateSMTPProvider", { provider: { description, smtp: smtpSettings(port, { senderAddress: "not an address" }) } }),
      noKind: await call("CreateSMTPProvider", { provider: { description } }),
      badReceiver: await call("TestSMTPProvider", { id, test: { receiver: "nobody" } }),
      unauthenticated: await client.call("GetSMTPProvider", { id }),
    };
    return { results, id };
  }

  it("serves every RPC alike over gRPC, gRPC-web, Connect and REST, and _test delivers through STARTTLS with AUTH", async () => {
    const runs = new Map<Protocol, { results: Record<string, CallResult>; id: string }>();
    for (const protocol of PROTOCOLS) runs.set(protocol, await scenario(protocol));

    const grpc = runs.get("grpc")!.results;
    expect(okMessage(grpc.get!).provider).toEqual({
      details: expect.objectContaining({ sequence: "1", resourceOwner: { type: "OWNER_TYPE_INSTANCE", id: server.instanceId } }),
      state: "EFFECTIVE_STATE_INACTIVE",
      description: "mail-ga",
      smtp: {
        host: "localhost",
        port,
        tls: "SMTP_TLS_STARTTLS",
        user: "mailer",
        passwordSet: true,
        senderAddress: "noreply@platform.example",
        senderName: "Platform",
        replyToAddress: "help@platform.example",
      },
    });
    expect(okMessage(grpc.search!).result).toHaveLength(1);
    expect(okMessage(grpc.tested!)).toEqual({});
    expect(okMessage(grpc.unchanged!).details.sequence).toBe(okMessage(grpc.patched!).details.sequence);
    expect(okMessage(grpc.afterActivation!).provider).toMatchObject({ state: "EFFECTIVE_STATE_ACTIVE", smtp: { senderName: "Platform Team" } });
    expect(okMessage(grpc.activatedAgain!).details.sequence).toBe(okMessage(grpc.activated!).details.sequence);
    expect(okMessage(grpc.deactivatedAgain!).details.sequence).toBe(okMessage(grpc.deactivated!).details.sequence);
    expect(grpc.refusedAuth).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect((grpc.refusedAuth as { message: string }).message).toMatch(/AUTH PLAIN with 535\b.*Invalid username or password/);
    for (const step of ["getDeleted", "deleteAgain", "testDeleted"]) expect(grpc[step], step).toMatchObject({ ok: false, code: Code.NotFound });
    for (const step of ["invalid", "noKind", "badReceiver"]) expect(grpc[step], step).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(grpc.unauthenticated).toMatchObject({ ok: false, code: Code.Unauthenticated });
    expect(runs.get("rest")!.results.created).toMatchObject({ ok: true, httpStatus: 201 });
    expect(runs.get("rest")!.results.refusedAuth).toMatchObject({ ok: false, httpStatus: 400 });

    const reference = Object.fromEntries(
      Object.entries(grpc).map(([step, r]) => [step, comparable(r, { provider: runs.get("grpc")!.id }, { prefix: "mail-" })]),
    );
    for (const [protocol, { results, id }] of runs) {
      for (const [step, r] of Object.entries(results)) {
        const seen = comparable(r, { provider: id }, { prefix: "mail-" });
        expect(seen, `${protocol} ${step}`).toEqual(reference[step]);
      }
      const message = smtp.delivered.find((d) => d.to[0] === `to-${PROTOCOL_TOKEN[protocol]}@mail.example`);
      expect(message, `${protocol}: the test email arrived`).toBeDefined();
      expect(message).toMatchObject({ from: "noreply@platform.example", user: "mailer", secure: true });
      expect(message!.mail.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" });
      expect(message!.mail.subject).toBe("Test email");
      expect(message!.mail.from?.value).toEqual([{ address: "noreply@platform.example", name: "Platform" }]);
      expect(message!.mail.replyTo?.value).toEqual([{ address: "help@platform.example", name: "" }]);
      expect(message!.mail.text).toContain("SMTP provider delivers");
      expect(message!.mail.html).toContain("<p>This test email shows that the SMTP provider delivers.</p>");
    }
    expect(smtp.delivered).toHaveLength(PROTOCOLS.length);
  });

  it("authenticates with AUTH LOGIN where the server offers only that, and speaks implicit TLS", async () => {
    const admin = serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken);
    const loginOnly = new TestSmtpServer({ certificates, users: { mailer: PASSWORD }, authMethods: ["LOGIN"] });
    const implicit = new TestSmtpServer({ certificates, users: { mailer: PASSWORD }, implicitTls: true });
    try {
      const cases = [
        { server: loginOnly, settings: smtpSettings(await loginOnly.start()), method: "AUTH LOGIN" },
        { server: implicit, settings: smtpSettings(await implicit.start(), { tls: "SMTP_TLS_IMPLICIT" }), method: "AUTH PLAIN" },
      ];
      for (const c of cases) {
        const id = (await admin.ok("CreateSMTPProvider", { provider: { description: c.method, smtp: c.settings } })).details.id;
        await admin.ok("TestSMTPProvider", { id, test: { receiver: "login@mail.example" } });
        expect(await c.server.nth(1)).toMatchObject({ user: "mailer", secure: true, to: ["login@mail.example"] });
        await admin.ok("PatchSMTPProvider", { id, provider: { smtp: { password: "wrong" } } });
        const refused = await admin.call("TestSMTPProvider", { id, test: { receiver: "login@mail.example" } });
        expect(refused).toMatchObject({ ok: false, code: Code.FailedPrecondition });
        expect((refused as { message: string }).message).toContain(`${c.method} with 535`);
      }
    } finally {
      await loginOnly.close();
      await implicit.close();
    }
  });

  it("answers a refused recipient in the server's words, and an unreachable server as such", async () => {
    const admin = serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken);
    const id = (await admin.ok("CreateSMTPProvider", { provider: { description: "refusing", smtp: smtpSettings(port) } })).details.id;
    const refused = await admin.call("TestSMTPProvider", { id, test: { receiver: "refused@mail.example" } });
    expect(refused).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect((refused as { message: string }).message).toMatch(/RCPT TO with 550 5\.1\.1 No such mailbox here/);

    const closed = new TestSmtpServer({ certificates, users: {} });
    const closedPort = await closed.start();
    await closed.close();
    await admin.ok("PatchSMTPProvider", { id, provider: { smtp: { port: closedPort, password: PASSWORD } } });
    const unreachable = await admin.call("TestSMTPProvider", { id, test: { receiver: "someone@mail.example" } });
    expect(unreachable).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect((unreachable as { message: string }).message).toMatch(/ECONNECTION|ECONNREFUSED/);
  });

  it.each(["grpc", "rest"] as const)(
    "keeps the password only for where it was given: a patch changing host, port, TLS or user must carry it again (%s)",
    async (protocol) => {
      const admin = serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken, protocol);
      // Another server that would take the password, where a patch could point the provider.
      const elsewhere = new TestSmtpServer({ certificates, users: { mailer: PASSWORD }, implicitTls: true });
      const elsewherePort = await elsewhere.start();
      try {
        const id = (await admin.ok("CreateSMTPProvider", { provider: { description: "aimed", smtp: smtpSettings(port) } })).details.id;
        const before = await admin.ok("GetSMTPProvider", { id });
        const moves: [string, JsonObject][] = [
          ["host", { host: "127.0.0.1" }],
          ["port", { port: elsewherePort }],
          ["tls", { tls: "SMTP_TLS_IMPLICIT" }],
          ["user", { user: "someone" }],
          ["host", { host: "127.0.0.1", port: elsewherePort, tls: "SMTP_TLS_IMPLICIT", senderName: "Moved" }],
        ];
        for (const [field, settings] of moves) {
          const refused = await admin.call("PatchSMTPProvider", { id, provider: { smtp: settings } });
          expect(refused, JSON.stringify(settings)).toMatchObject({
            ok: false,
            code: Code.InvalidArgument,
            message: expect.stringMatching(new RegExp(`^changing ${field} needs password `)),
          });
          if (protocol === "rest") expect(refused.httpStatus).toBe(400);
        }
        expect(await admin.ok("GetSMTPProvider", { id }), "nothing stored changed").toEqual(before);

        // Other settings, and aiming ones given as they are, keep it: _test still authenticates.
        await admin.ok("PatchSMTPProvider", { id, provider: { smtp: { senderName: "Kept", host: "localhost", port, user: "mailer" } } });
        await admin.ok("TestSMTPProvider", { id, test: { receiver: `kept-${protocol}@mail.example` } });
        expect(smtp.delivered.find((d) => d.to[0] === `kept-${protocol}@mail.example`)).toMatchObject({ user: "mailer" });

        // With the password the provider moves.
        await admin.ok("PatchSMTPProvider", {
          id,
          provider: { smtp: { host: "127.0.0.1", port: elsewherePort, tls: "SMTP_TLS_IMPLICIT", password: PASSWORD } },
        });
        await admin.ok("TestSMTPProvider", { id, test: { receiver: "moved@mail.example" } });
        expect(elsewhere.delivered.map((d) => [d.user, d.to])).toEqual([["mailer", ["moved@mail.example"]]]);
      } finally {
        await elsewhere.close();
      }
    },
  );

  it("makes an http provider of an SMTP one and back: a signing key once, the password dropped", async () => {
    const admin = serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken);
    const made = await admin.ok("CreateSMTPProvider", { provider: { description: "switching", smtp: smtpSettings(port) } });
    expect(made).not.toHaveProperty("signingKey");
    const id = made.details.id;
    const toHttp = await admin.ok("PatchSMTPProvider", { id, provider: { http: { url: "https://mailer.example/send" } } });
    expect(toHttp.signingKey).toMatch(/^[A-Za-z0-9]{36}$/);
    expect((await admin.ok("GetSMTPProvider", { id })).provider).toMatchObject({ http: { url: "https://mailer.example/send" } });
    const incomplete = await admin.call("PatchSMTPProvider", { id, provider: { smtp: { senderName: "only a name" } } });
    expect(incomplete).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect((incomplete as { message: string }).message).toContain("host, senderAddress");
    const { password: _, ...withoutPassword } = smtpSettings(port);
    const back = await admin.ok("PatchSMTPProvider", { id, provider: { smtp: withoutPassword } });
    expect(back).not.toHaveProperty("signingKey");
    expect((await admin.ok("GetSMTPProvider", { id })).provider.smtp).toMatchObject({ host: "localhost" });
    expect((await admin.ok("GetSMTPProvider", { id })).provider.smtp).not.toHaveProperty("passwordSet");
    const noKey = await admin.call("PatchSMTPProvider", { id, provider: { regenerateSigningKey: true } });
    expect(noKey).toMatchObject({ ok: false, code: Code.FailedPrecondition });
  });
});
