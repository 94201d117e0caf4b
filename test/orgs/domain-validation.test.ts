import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PlatformDomainSettings } from "../../gen/platform/settings/domain/v3alpha/domain_service_pb.js";
import { loginOrgOf } from "../../src/oidc/login/external/providers.js";
import { userByLoginName } from "../../src/domain/user/login-names.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { TestDnsServer } from "../support/dns-server.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { WebFiles } from "../support/web-files.js";
import { createOrg, failed, ok, type Msg } from "../settings/helpers.js";

/**
 * GenerateDomainValidation and ValidateDomain against a real DNS server (dns2) and a real web
 * server on loopback: the service asks the DNS server for the TXT records and, through it,
 * for the address of the HTTP check, whose ports point at the web server. Every failed
 * check says what it found; validate_org_domains makes verification matter.
 */

const DOMAINS = PlatformDomains;
const DNS = "DOMAIN_VALIDATION_TYPE_DNS";
const HTTP = "DOMAIN_VALIDATION_TYPE_HTTP";
const TTL_HOURS = 72;

describe.each(DATABASE_KINDS)("domain validation (%s)", (kind) => {
  let server: TestServer;
  let dnsServer: string;
  const dns = new TestDnsServer();
  const web = new WebFiles();
  let org: string;
  let counter = 0;
  const unique = (label: string) => `${label}-${++counter}-${Math.random().toString(36).slice(2, 6)}.acme.example`;

  const call = (protocol: Protocol, method: string, req: JsonObject, token = server.adminToken): Promise<CallResult> =>
    protocolClient(DOMAINS, protocol, server.baseUrl).call(method, req, token);
  const generate = async (domain: string, type: string, protocol: Protocol = "grpc") =>
    ok(await call(protocol, "GenerateDomainValidation", { domain, type }), `generate ${domain}`);
  const validate = (domain: string, protocol: Protocol = "grpc") => call(protocol, "ValidateDomain", { domain });
  const notVerified = async (domain: string, protocol: Protocol = "grpc") => {
    const r = await validate(domain, protocol);
    if (protocol === "rest") expect(r.httpStatus).toBe(400);
    return failed(r, Code.FailedPrecondition, `validate ${domain}`);
  };
  /** A new domain of the organization, added by the admin; unverified. */
  const added = async (label: string, orgId = org) => {
    const domain = unique(label);
    ok(await call("grpc", "AddDomain", { domain: { domain }, ctx: { orgId } }), `add ${domain}`);
    return domain;
  };
  const found = async (domain: string): Promise<Msg> => {
    const m = ok(await call("grpc", "SearchDomains", { filters: [{ domain: { domain, method: "TEXT_FILTER_METHOD_EQUALS" } }] }));
    return m.result?.[0];
  };
  const isVerified = async (domain: string) => (await found(domain))?.isVerified ?? false;
  const fileOf = (token: string) => `/.well-known/platform-challenge/${token}.txt`;
  const urlOf = (scheme: "https" | "http", domain: string, token: string) => `${scheme}://${domain}:${web.port}${fileOf(token)}`;
  /** A domain whose address (per the test DNS server) is the web server's. */
  const addedOnWeb = async (label: string) => {
    const domain = await added(label);
    dns.a.set(domain, "127.0.0.1");
    return domain;
  };

  beforeAll(async () => {
    dnsServer = await dns.start();
    await web.start();
    server = await startTestServer(kind, {
      PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
      PLATFORM_OUTBOUND_TIMEOUT: "1s",
      PLATFORM_DNS_SERVERS: dnsServer,
      PLATFORM_DNS_TIMEOUT: "1s",
      // Both schemes reach the plain web server: https fails its handshake, http answers.
      PLATFORM_DOMAIN_VALIDATION_HTTPS_PORT: String(web.port),
      PLATFORM_DOMAIN_VALIDATION_HTTP_PORT: String(web.port),
    });
    org = await createOrg(server, "Validation Acme");
  });
  afterAll(async () => {
    await server?.close();
    web.close();
    await dns.close();
  });

  it.each(PROTOCOLS)("a TXT record with the token proves a domain, over %s", async (protocol) => {
    const domain = await added(`dns-${protocol}`);
    // With the organization's ctx (over REST inside the body, which is the whole request).
    const generated = ok(await call(protocol, "GenerateDomainValidation", { domain, type: DNS, ctx: { orgId: org } }), `generate ${domain}`);
    expect(generated).toMatchObject({
      details: { id: domain, resourceOwner: { type: "OWNER_TYPE_ORG", id: org } },
      type: DNS,
      location: `_platform-challenge.${domain}`,
    });
    expect(generated.token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(Date.parse(generated.expirationDate) - Date.parse(generated.details.changeDate)).toBe(TTL_HOURS * 3600_000);
    expect(await notVerified(domain, protocol)).toBe(`${domain} is not verified: no TXT record at _platform-challenge.${domain}`);

    dns.txt.set(`_platform-challenge.${domain}`, ["v=spf1 -all", generated.token]);
    const validated = await validate(domain, protocol);
    expect(validated, JSON.stringify(validated)).toMatchObject({ ok: true, message: { details: { id: domain, resourceOwner: { id: org } } } });
    if (protocol === "rest") expect(validated.httpStatus).toBe(200);
    expect(await found(domain)).toMatchObject({ domain, isVerified: true });
    expect(BigInt((validated as { message: Msg }).message.details.sequence)).toBeGreaterThan(BigInt(generated.details.sequence));

    // Verified: nothing is left to prove.
    expect(await notVerified(domain, protocol)).toBe(`${domain} is verified already`);
    expect(failed(await call(protocol, "GenerateDomainValidation", { domain, type: DNS }), Code.FailedPrecondition)).toBe(`${domain} is verified already`);
  });

  it.each(PROTOCOLS)("a file with the token on the domain's web server proves it, over %s", async (protocol) => {
    const domain = await addedOnWeb(`web-${protocol}`);
    const generated = await generate(domain, HTTP, protocol);
    expect(generated).toMatchObject({ type: HTTP, location: urlOf("https", domain, generated.token) });
    web.files.set(fileOf(generated.token), { body: `${generated.token}\n` });
    const validated = await validate(domain, protocol);
    expect(validated, JSON.stringify(validated)).toMatchObject({ ok: true, message: { details: { id: domain } } });
    expect(await isVerified(domain)).toBe(true);
    // https (a TLS handshake with a plain HTTP server) failed, http found the file.
    expect(web.asked).toContain(fileOf(generated.token));
  });

  it("says what it found when the token is not where it should be, and leaves the domain unverified", async () => {
    const wrongTxt = await added("wrong-txt");
    const t1 = (await generate(wrongTxt, DNS)).token;
    dns.txt.set(`_platform-challenge.${wrongTxt}`, ["x", "y"]);
    expect(await notVerified(wrongTxt)).toBe(`${wrongTxt} is not verified: the TXT records at _platform-challenge.${wrongTxt} are "x", "y", not the token`);
    dns.txt.set(`_platform-challenge.${wrongTxt}`, [`${t1} `]);
    expect(await notVerified(wrongTxt, "rest")).toContain(`are "${t1} ", not the token`);

    const silent = await added("silent-dns");
    await generate(silent, DNS);
    dns.silent.add(`_platform-challenge.${silent}`);
    const started = Date.now();
    expect(await notVerified(silent)).toBe(
      `${silent} is not verified: the TXT lookup of _platform-challenge.${silent} failed: no answer from the DNS servers within 1000 ms`,
    );
    expect(Date.now() - started).toBeLessThan(5_000);

    const missing = await addedOnWeb("missing-file");
    const t2 = (await generate(missing, HTTP)).token;
    const notFound = await notVerified(missing);
    // https met a plain HTTP server (OpenSSL's reason, "wrong version number", may vary), then http the 404.
    expect(notFound.startsWith(`${missing} is not verified: ${urlOf("https", missing, t2)} could not be called: TLS failed: `), notFound).toBe(true);
    expect(notFound.endsWith(`; ${urlOf("http", missing, t2)} answered HTTP 404`), notFound).toBe(true);

    const wrongFile = await addedOnWeb("wrong-file");
    const t3 = (await generate(wrongFile, HTTP)).token;
    web.files.set(fileOf(t3), { body: "nope" });
    expect(await notVerified(wrongFile, "connect")).toContain(`${urlOf("http", wrongFile, t3)} answered "nope", not the token`);
    web.files.set(fileOf(t3), { status: 302, body: "" });
    expect(await notVerified(wrongFile)).toContain(`${urlOf("http", wrongFile, t3)} answered HTTP 302 (redirects are not followed)`);

    const hanging = await addedOnWeb("hanging-web");
    const t4 = (await generate(hanging, HTTP)).token;
    web.files.set(fileOf(t4), { hang: true });
    expect(await notVerified(hanging)).toContain(`${urlOf("http", hanging, t4)} did not answer within 1000 ms`);

    const nowhere = await added("no-address");
    const t5 = (await generate(nowhere, HTTP)).token;
    expect(await notVerified(nowhere)).toContain(`${urlOf("http", nowhere, t5)} could not be called: ${nowhere} has no address`);

    for (const domain of [wrongTxt, silent, missing, wrongFile, hanging, nowhere]) expect(await isVerified(domain), domain).toBe(false);
  });

  it("a new token replaces the earlier one, whatever its type", async () => {
    const domain = await addedOnWeb("regenerated");
    const first = await generate(domain, DNS);
    const second = await generate(domain, DNS);
    expect(second.token).not.toBe(first.token);
    expect(BigInt(second.details.sequence)).toBeGreaterThan(BigInt(first.details.sequence));
    dns.txt.set(`_platform-challenge.${domain}`, [first.token]);
    expect(await notVerified(domain)).toContain(`are "${first.token}", not the token`);

    const third = await generate(domain, HTTP);
    dns.txt.set(`_platform-challenge.${domain}`, [second.token]);
    // Now a file is looked for, not the record.
    expect(await notVerified(domain)).toContain(`${urlOf("http", domain, third.token)} answered HTTP 404`);
    web.files.set(fileOf(second.token), { body: second.token });
    expect(await notVerified(domain)).toContain(`${urlOf("http", domain, third.token)} answered HTTP 404`);
    web.files.set(fileOf(third.token), { body: third.token });
    ok(await validate(domain));
    expect(await isVerified(domain)).toBe(true);
  });

  it("refuses a validation nobody generated and an expired token; generated domains need no proof", async () => {
    const domain = await added("pending");
    expect(await notVerified(domain)).toBe(`no validation of ${domain} is pending; generate a token first (_generate_validation)`);

    const generated = await generate(domain, DNS);
    dns.txt.set(`_platform-challenge.${domain}`, [generated.token]);
    // The token was made longer ago than PLATFORM_DOMAIN_VALIDATION_TTL.
    const past = new Date(Date.now() - (TTL_HOURS * 3600_000 + 1000));
    await server.service.store.db
      .updateTable("org_domains")
      .set({ validation_created_at: past })
      .where("instance_id", "=", server.instanceId)
      .where("domain", "=", domain)
      .execute();
    const expired = await notVerified(domain);
    expect(expired).toBe(
      `the validation token of ${domain} expired at ${new Date(past.getTime() + TTL_HOURS * 3600_000).toISOString()}; generate a new one (_generate_validation)`,
    );
    expect(await isVerified(domain)).toBe(false);
    const renewed = await generate(domain, DNS);
    dns.txt.set(`_platform-challenge.${domain}`, [renewed.token]);
    ok(await validate(domain));

    const primary = String(
      ok(
        await protocolClient(PlatformDomains, "grpc", server.baseUrl).call(
          "SearchDomains",
          { ctx: { orgId: org }, filters: [{ primary: { isPrimary: true } }] },
          server.adminToken,
        ),
      ).result[0].domain,
    );
    expect(failed(await call("grpc", "GenerateDomainValidation", { domain: primary, type: HTTP }), Code.FailedPrecondition)).toBe(
      `${primary} was generated from the organization's name and is verified already`,
    );
    for (const protocol of PROTOCOLS) {
      failed(await call(protocol, "ValidateDomain", { domain: "no-such.acme.example" }), Code.NotFound, protocol);
      failed(await call(protocol, "GenerateDomainValidation", { domain: "no-such.acme.example", type: DNS }), Code.NotFound, protocol);
      failed(await call(protocol, "GenerateDomainValidation", { domain, type: "DOMAIN_VALIDATION_TYPE_UNSPECIFIED" }), Code.InvalidArgument, protocol);
    }
  });

  it("keeps the token out of the events, which say what happened", async () => {
    const domain = await added("events");
    const { token } = await generate(domain, DNS);
    dns.txt.set(`_platform-challenge.${domain}`, [token]);
    ok(await validate(domain));
    const events = await server.service.store.db
      .selectFrom("events")
      .select(["event_type", "payload"])
      .where("instance_id", "=", server.instanceId)
      .where("aggregate_id", "=", org)
      .where("event_type", "in", ["org.domain.validation.generated", "org.domain.verified"])
      .orderBy("position")
      .execute();
    const mine = events.filter((e) => (e.payload as { domain: string }).domain === domain);
    expect(mine).toEqual([
      { event_type: "org.domain.validation.generated", payload: { domain, type: "dns" } },
      { event_type: "org.domain.verified", payload: { domain, type: "dns" } },
    ]);
    expect(JSON.stringify(events)).not.toContain(token);
    const row = await server.service.store.db
      .selectFrom("org_domains")
      .selectAll()
      .where("instance_id", "=", server.instanceId)
      .where("domain", "=", domain)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ is_verified: true, validation_type: null, validation_token: null, validation_created_at: null });
  });

  it("with validate_org_domains, only verified domains become primary and form login names", async () => {
    const settings = protocolClient(PlatformDomainSettings, "grpc", server.baseUrl);
    const loginOrg = await createOrg(server, `Validation Login ${kind}`);
    const unverified = await added("login-unverified", loginOrg);
    const verified = await added("login-verified", loginOrg);
    const { token } = await generate(verified, DNS);
    dns.txt.set(`_platform-challenge.${verified}`, [token]);
    ok(await validate(verified));
    const username = `vera-${kind}`;
    ok(
      await protocolClient(PlatformUsers, "grpc", server.baseUrl).call(
        "CreateUser",
        {
          user: { username, human: { profile: { givenName: "Vera", familyName: "Fied" }, email: { address: `${username}@mail.example` } } },
          ctx: { orgId: loginOrg },
        },
        server.adminToken,
      ),
    );
    const db = server.service.store.db;
    const loginOf = async (domain: string) => (await userByLoginName(db, server.instanceId, `${username}@${domain}`))?.orgId;
    const routedBy = async (domain: string) => (await loginOrgOf(db, server.instanceId, { login_hint: `nobody@${domain}` })).orgId;

    // Off (the default): any domain of the organization will do.
    expect(await loginOf(unverified)).toBe(loginOrg);
    expect(await routedBy(unverified)).toBe(loginOrg);
    ok(await settings.call("SetDomainSettings", { settings: { validateOrgDomains: { set: true } } }, server.adminToken));
    try {
      expect(await loginOf(unverified)).toBeUndefined();
      expect(await routedBy(unverified)).toBe(server.defaultOrgId);
      expect(await loginOf(verified)).toBe(loginOrg);
      expect(await routedBy(verified)).toBe(loginOrg);
      for (const protocol of PROTOCOLS) {
        const refused = failed(await call(protocol, "SetAsPrimary", { domain: unverified }), Code.FailedPrecondition, protocol);
        expect(refused).toBe(
          `${unverified} is not verified, and the instance's domain settings (validate_org_domains) let only verified domains become primary; verify it first (_generate_validation, _validate)`,
        );
      }
      ok(await call("grpc", "SetAsPrimary", { domain: verified }));
      expect(await found(verified)).toMatchObject({ isPrimary: true, isVerified: true });
      expect((await userByLoginName(db, server.instanceId, `${username}@${verified}`))?.loginName).toBe(`${username}@${verified}`);
    } finally {
      ok(await settings.call("SetDomainSettings", { settings: { validateOrgDomains: { reset: true } } }, server.adminToken));
    }
    // Off again: the unverified domain may become primary.
    ok(await call("grpc", "SetAsPrimary", { domain: unverified }));
    expect(await loginOf(unverified)).toBe(loginOrg);
  });

  it("without PLATFORM_OUTBOUND_ALLOW_PRIVATE, a domain whose address is internal is not called", async () => {
    const guarded = await startTestServer(kind, {
      PLATFORM_DNS_SERVERS: dnsServer,
      PLATFORM_DOMAIN_VALIDATION_HTTPS_PORT: String(web.port),
      PLATFORM_DOMAIN_VALIDATION_HTTP_PORT: String(web.port),
    });
    try {
      const client = protocolClient(DOMAINS, "grpc", guarded.baseUrl);
      const domain = unique("internal");
      dns.a.set(domain, "127.0.0.1");
      ok(await client.call("AddDomain", { domain: { domain } }, guarded.adminToken));
      const { token } = ok(await client.call("GenerateDomainValidation", { domain, type: HTTP }, guarded.adminToken));
      web.files.set(fileOf(token), { body: token });
      const asked = web.asked.length;
      const refused = failed(await client.call("ValidateDomain", { domain }, guarded.adminToken), Code.FailedPrecondition);
      const reason = `${domain} resolves to the internal address 127.0.0.1, and the service calls no internal address (PLATFORM_OUTBOUND_ALLOW_PRIVATE)`;
      expect(refused).toBe(
        `${domain} is not verified: ${urlOf("https", domain, token)} was not called: ${reason}; ${urlOf("http", domain, token)} was not called: ${reason}`,
      );
      expect(web.asked.length, "the web server was never called").toBe(asked);
      // The operator's DNS servers are trusted: TXT records on loopback still count.
      const other = unique("internal-dns");
      ok(await client.call("AddDomain", { domain: { domain: other } }, guarded.adminToken));
      const txt = ok(await client.call("GenerateDomainValidation", { domain: other, type: DNS }, guarded.adminToken));
      dns.txt.set(`_platform-challenge.${other}`, [txt.token]);
      ok(await client.call("ValidateDomain", { domain: other }, guarded.adminToken));
    } finally {
      await guarded.close();
    }
  });
});
