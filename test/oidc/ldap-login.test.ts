import type { JsonObject } from "@bufbuild/protobuf";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { Code } from "@connectrpc/connect";
import { PlatformIDPIntents } from "../../gen/platform/resources/idp_intent/v3alpha/idp_intent_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { CHROMIUM, launchChromium } from "../support/page-checks.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { idpClient } from "../idps/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { BASE_DN, BIND_DN, BIND_PASSWORD, HAS_SLAPD, LDAP_ATTRIBUTES, SLAPD_SKIP, silentServer, startSlapd, type Directory } from "../support/slapd.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { until } from "../support/until.js";
import { Users, humanUser, uniqueName } from "../users/helpers.js";
import { Browser, alertText, formWith, type Page } from "./browser.js";
import { RP, authorize, createRp, providerForm, tokensOf as tokensOfApp, type App } from "./external-helpers.js";

/*
 * LDAP sign-in on the login pages (issue 38) against a real slapd (test/support/slapd.ts): the
 * provider's button leads to the service's own form (loginName, password), the directory
 * checks them, and the login goes on as with any external provider: auto-creation, linking,
 * the link at the next login. Skipped, saying so, where slapd is not installed.
 */

const en = TEXTS.en;
const ALICE_PW = "Alice-pw-1";
const BOB_PW = "Bob-ldap-pw-1";
const LOCAL_PW = "Corr3ct-horse!";

describe.skipIf(!HAS_SLAPD).each(DATABASE_KINDS)(`LDAP login (%s) ${HAS_SLAPD ? "" : SLAPD_SKIP}`, (kind) => {
  let dir: Directory;
  let server: TestServer;
  let rp: App;
  let hanging: Awaited<ReturnType<typeof silentServer>>;
  const idp = { ldaps: "", startTls: "", linking: "", down: "" };
  let bobLocal: string;
  let bobName: string;

  beforeAll(async () => {
    bobName = uniqueName("bob");
    [dir, server, hanging] = await Promise.all([
      startSlapd([
        {
          uid: "alice",
          cn: "Alice Liddell",
          givenName: "Alice",
          sn: "Liddell",
          mail: "alice@ldap.example",
          password: ALICE_PW,
          preferredLanguage: "de",
          telephoneNumber: "+41445550101",
        },
        { uid: "carol", cn: "Carol Danvers", givenName: "Carol", sn: "Danvers", mail: "carol@ldap.example", password: ALICE_PW },
        { uid: bobName, cn: "Bob Builder", givenName: "Bob", sn: "Builder", mail: "bob@ldap.example", password: BOB_PW },
      ]),
      startTestServer(kind, {
        PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
        PLATFORM_LOGIN_RATE_PER_IP: "100000",
        PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "100000",
        // Every failed attempt of this file comes from 127.0.0.1: each must be a row of its own, not a summary.
        PLATFORM_AUDIT_SIGNIN_BURST: "100000",
      }),
      silentServer(),
    ]);
    rp = await createRp(server);
    bobLocal = await new Users(server).create(humanUser(bobName, { password: LOCAL_PW }, { givenName: "Bob", familyName: "Local" }));
    const idps = idpClient(server.baseUrl, server.adminToken);
    const ldapIdp = async (name: string, options: JsonObject, config: JsonObject) =>
      (
        await idps.ok("CreateLDAPIDP", {
          idp: {
            idp: { name, options },
            config: {
              servers: [dir.ldapsUrl],
              baseDn: BASE_DN,
              bindDn: BIND_DN,
              bindPassword: BIND_PASSWORD,
              userBase: "ou=people",
              userObjectClasses: ["inetOrgPerson"],
              userFilters: ["uid", "mail"],
              timeout: "5s",
              rootCa: dir.caPem,
              attributes: LDAP_ATTRIBUTES,
              ...config,
            },
          },
        })
      ).details.id as string;
    idp.ldaps = await ldapIdp("Directory", { isAutoCreation: true }, {});
    idp.startTls = await ldapIdp("Directory StartTLS", { isAutoCreation: true }, { servers: [dir.ldapUrl], startTls: true });
    idp.linking = await ldapIdp("Directory linking", { autoLinking: "AUTO_LINKING_OPTION_USERNAME" }, {});
    idp.down = await ldapIdp("Directory down", { isAutoCreation: true }, { servers: [hanging.url], timeout: "1s" });
  }, 120_000);
  afterAll(async () => {
    await Promise.all([server?.close(), dir?.stop(), hanging?.close()]);
  });

  const tokensOf = (request: { verifier: string; state: string }, page: Page) => tokensOfApp(rp, request, page);

  /** An authorization request and the provider's button: the LDAP form it leads to. */
  async function ldapForm(idpId: string, b = new Browser(server.baseUrl)) {
    const request = await authorize(server, rp);
    let page = await b.open(request.url);
    expect(page.status, page.html).toBe(200);
    const button = providerForm(page, idpId);
    expect(button, page.html).toBeDefined();
    page = await b.submit(button!, {}, page.url);
    expect(page.left, page.html).toBe(false);
    expect(page.status, page.html).toBe(200);
    return { b, request, page };
  }

  const signIn = (flow: Awaited<ReturnType<typeof ldapForm>>, loginName: string, password: string) =>
    flow.b.submit(formWith(flow.page.html, "password"), { loginName, password }, flow.page.url);

  it("leads from the provider's button to a form of the service with the fields loginName and password", async () => {
    const { page } = await ldapForm(idp.ldaps);
    const form = formWith(page.html, "password");
    expect(form.visible).toEqual(["loginName", "password"]);
    expect(form.method).toBe("post");
    expect(form.fields.idpId).toBe(idp.ldaps);
    expect(page.html).toContain(en.externalSignInWith.replace("{name}", "Directory"));
    for (const m of page.html.matchAll(/<script\b([^>]*)>/gi)) expect(m[1]).toMatch(/type="application\/json"|src="\/ui\/login\/assets\//);
  });

  it("creates a user from the entry's attributes (amr fed), and signs in through the link the next time", async () => {
    const first = await ldapForm(idp.ldaps);
    const done = await signIn(first, "alice", ALICE_PW);
    const tokens = await tokensOf(first.request, done);
    const sub = tokens.claims()!.sub;
    expect(tokens.claims()!.amr).toEqual(["fed"]);
    const created = await new Users(server).get(sub);
    expect(created.human.profile).toMatchObject({ givenName: "Alice", familyName: "Liddell", displayName: "Alice Liddell", preferredLanguage: "de" });
    expect(created.human.email).toMatchObject({ address: "alice@ldap.example" });
    expect(created.human.email.isVerified ?? false).toBe(false);
    expect(created.human.phone).toMatchObject({ number: "+41445550101" });
    // By the mail attribute this time.
    const again = await ldapForm(idp.ldaps);
    expect((await tokensOf(again.request, await signIn(again, "alice@ldap.example", ALICE_PW))).claims()!).toMatchObject({ sub, amr: ["fed"] });
    // Over ldap:// upgraded with StartTLS.
    const tls = await ldapForm(idp.startTls);
    const carol = (await tokensOf(tls.request, await signIn(tls, "carol", ALICE_PW))).claims()!.sub;
    expect((await new Users(server).get(carol)).human.profile).toMatchObject({ givenName: "Carol", familyName: "Danvers" });
  });

  it("answers a wrong password, an unknown user, an empty password and a filter in the login name with one message", async () => {
    const pages: Page[] = [];
    for (const [loginName, password] of [
      ["alice", "wrong"],
      ["nobody", ALICE_PW],
      ["alice", ""],
      ["*", ALICE_PW],
      ["alice)(uid=*", ALICE_PW],
      ["*)(|(objectClass=*", ALICE_PW],
    ]) {
      const flow = await ldapForm(idp.ldaps);
      const page = await signIn(flow, loginName!, password!);
      expect(page.left, `${loginName}: ${page.html}`).toBe(false);
      expect(page.status, loginName).toBe(401);
      expect(alertText(page.html), loginName).toBe(en.externalLdapRefused);
      // The form again, with the name as typed and never the password.
      expect(formWith(page.html, "password").fields.loginName).toBe(loginName);
      if (password) expect(page.html).not.toContain(password);
      pages.push(page);
    }
    const shape = (p: Page) => p.html.replace(/value="[^"]*"/g, "").replace(/\/ui\/login\/[^/"]+/g, "");
    expect(new Set(pages.map(shape)).size).toBe(1);
  });

  it("tells the audit log, not the page, whether the name was unknown or the password wrong", async () => {
    for (const [loginName, password, expected] of [
      ["nobody", ALICE_PW, "unknown_name"],
      ["alice", "wrong", "wrong_password"],
      ["alice", "", "wrong_password"],
    ] as const) {
      const agent = `ldap-audit-${randomUUID()}`;
      const flow = await ldapForm(idp.ldaps, new Browser(server.baseUrl, { "user-agent": agent }));
      expect((await signIn(flow, loginName, password)).status).toBe(401);
      const row = await until(`the sign-in event of ${agent}`, () =>
        server.service.store.db.selectFrom("events").selectAll().where("aggregate_type", "=", "signin").where("editor_agent", "=", agent).executeTakeFirst(),
      );
      expect(row.event_type).toBe("signin.failed");
      expect(row.payload).toMatchObject({ method: "idp", channel: "login", reason: expected });
      expect(JSON.stringify(row)).not.toContain(ALICE_PW);
    }
  });

  it("shows an error page within the provider's timeout when its server does not answer", async () => {
    const flow = await ldapForm(idp.down);
    const started = Date.now();
    const page = await signIn(flow, "alice", ALICE_PW);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(page.status).toBe(502);
    expect(alertText(page.html)).toBe(en.externalUnreachable);
    expect(page.html).not.toContain(ALICE_PW);
  });

  it("proposes the local user of the same username, links it after its password (amr pwd fed), then signs in directly", async () => {
    const flow = await ldapForm(idp.linking);
    const proposal = await signIn(flow, bobName, BOB_PW);
    expect(proposal.status, proposal.html).toBe(200);
    const form = formWith(proposal.html, "password");
    expect(form.visible).toEqual(["password"]);
    const linked = await flow.b.submit(form, { password: LOCAL_PW }, proposal.url);
    expect((await tokensOf(flow.request, linked)).claims()!).toMatchObject({ sub: bobLocal, amr: ["pwd", "fed"] });
    const again = await ldapForm(idp.linking);
    expect((await tokensOf(again.request, await signIn(again, bobName, BOB_PW))).claims()!).toMatchObject({ sub: bobLocal, amr: ["fed"] });
  });

  it.skipIf(!existsSync(CHROMIUM))(
    `signs in through the LDAP form in Chromium, by the fields' labels (skipped when ${CHROMIUM} is missing)`,
    async () => {
      const browser = await launchChromium();
      try {
        const page = await (await browser.newContext({ locale: "en" })).newPage();
        const request = await authorize(server, rp);
        let callback: URL | undefined;
        await page.route(`${new URL(RP).origin}/**`, async (route) => {
          callback = new URL(route.request().url());
          await route.fulfill({ status: 200, contentType: "text/plain", body: "signed in" });
        });
        await page.goto(request.url);
        await page.getByRole("button", { name: en.externalSignInWith.replace("{name}", "Directory StartTLS") }).click();
        await page.getByLabel(en.loginName).fill("carol");
        await page.getByLabel(en.password).fill("wrong");
        await page.getByRole("button", { name: en.next }).click();
        await page.getByRole("alert").filter({ hasText: en.externalLdapRefused }).waitFor();
        // The login name stays as typed; the password does not.
        await expect(page.getByLabel(en.loginName).inputValue()).resolves.toBe("carol");
        await expect(page.getByLabel(en.password).inputValue()).resolves.toBe("");
        await page.getByLabel(en.password).fill(ALICE_PW);
        await page.getByRole("button", { name: en.next }).click();
        await page.waitForURL((u) => u.origin === new URL(RP).origin);
        const tokens = await tokensOfApp(rp, request, { left: true, url: callback!.href, status: 303, html: "", headers: new Headers(), hops: [] });
        expect(tokens.claims()!.amr).toEqual(["fed"]);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );

  it("refuses the form for a provider of another type, and an API intent for an LDAP provider", async () => {
    const flow = await ldapForm(idp.ldaps);
    const form = formWith(flow.page.html, "password");
    const page = await flow.b.submit({ ...form, fields: { ...form.fields, idpId: "no-such-idp" } }, { loginName: "alice", password: ALICE_PW }, flow.page.url);
    expect(page.left).toBe(false);
    expect(page.status).toBe(404);
    // The API's intents send the browser to a provider's pages, which an LDAP provider has none of.
    const intent = await protocolClient(PlatformIDPIntents, "grpc", server.baseUrl).call(
      "StartIDPIntent",
      { idpId: idp.ldaps, successUrl: "https://ui.example/ok", failureUrl: "https://ui.example/failed" },
      server.adminToken,
    );
    expect(intent).toMatchObject({ ok: false, code: Code.FailedPrecondition });
  });
});
