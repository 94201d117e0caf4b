import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { idpClient } from "../idps/helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, failed, humanUser, ok, uniqueName, Users } from "../users/helpers.js";
import { linkAccount } from "../users/idp-links.js";
import { totpCode, wrongTotpCode } from "../users/totp.js";
import { alertText, Browser, formWith, type Page } from "./browser.js";
import { authorize, createRp, providerForm, tokensOf, type App } from "./external-helpers.js";
import { startFakeGitHub, type FakeGitHub, type GitHubAccount } from "./fake-github.js";

/*
 * Linking an external account (src/oidc/login/external/flow.ts, pending-link.ts) against an
 * attacker who knows a person's password but not its second factor, and against providers
 * of other organizations (src/domain/idp/login-use.ts): issue 41, §1. The upstream is a fake
 * GitHub (fake-github.ts) whose signed-in account each test sets: the attacker's own.
 */

const PASSWORD = "Corr3ct-horse!";
const en = TEXTS.en;
let githubIds = 9000;

const account = (login: string): GitHubAccount => ({
  profile: { id: ++githubIds, login, name: login, email: null },
  emails: [{ email: `${login}@mail.example`, primary: true, verified: true, visibility: "private" }],
});

describe.each(DATABASE_KINDS)("linking an external account (%s)", (kind) => {
  let github: FakeGitHub;
  let server: TestServer;
  let users: Users;
  let rp: App;
  /** An instance provider that allows manual linking only. */
  let instanceIdp: string;

  beforeAll(async () => {
    github = await startFakeGitHub();
    server = await startTestServer(kind, {
      ...github.env,
      PLATFORM_LOGIN_RATE_PER_IP: "100000",
      PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "100000",
    });
    users = new Users(server);
    rp = await createRp(server);
    instanceIdp = await gitHubIdp("GitHub");
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await github?.close();
  });

  async function gitHubIdp(name: string, ctx?: JsonObject, options: JsonObject = {}): Promise<string> {
    const config = { clientId: github.clientId, clientSecret: github.clientSecret };
    const made = await idpClient(server.baseUrl, server.adminToken).ok("CreateGitHubIDP", {
      idp: { idp: { name, options: { isManualLinkingAllowed: true, ...options } }, config },
      ...(ctx && { ctx }),
    });
    return made.details.id as string;
  }

  const loginSettings = async (settings: JsonObject, orgId: string) =>
    ok(await protocolClient(PlatformLoginSettings, "grpc", server.baseUrl).call("SetLoginSettings", { settings, ctx: { orgId } }, server.adminToken));

  async function person(orgId?: string) {
    const name = uniqueName("victim");
    const id = await users.create(
      humanUser(name, { password: PASSWORD, email: { address: `${name}@mail.example`, isVerified: true } }),
      orgId ? { orgId } : undefined,
    );
    return { id, loginName: name };
  }

  async function withTotp(id: string): Promise<string> {
    const { secret } = ok(await users.call("AddTOTP", { id }));
    ok(await users.call("VerifyTOTP", { id, verification: { code: totpCode(secret) } }));
    return secret as string;
  }

  /** Through the provider's button as `who` at GitHub: the page the service answers after GitHub's return. */
  async function viaGitHub(idpId: string, who: GitHubAccount, params: Record<string, string> = {}, b = new Browser(server.baseUrl)) {
    github.account = who;
    const request = await authorize(server, rp);
    const url = new URL(request.url);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    let page = await b.open(url.href);
    const button = providerForm(page, idpId);
    expect(button, page.html).toBeDefined();
    page = await b.submit(button!, {}, page.url);
    expect(page.left, page.html).toBe(true);
    const back = await new Browser(github.url).open(page.url);
    expect(back.left, back.html).toBe(true);
    return { b, request, page: await b.open(back.url) };
  }

  /** The manual link page after a login with an unlinked account, and its form submitted with a login name and password. */
  async function linkWith(flow: { b: Browser; page: Page }, loginName: string, password = PASSWORD): Promise<Page> {
    expect(flow.page.status, flow.page.html).toBe(200);
    const choice = flow.page.html.match(/href="([^"]*\/idp\/link)"/)?.[1];
    expect(choice, flow.page.html).toBeDefined();
    const page = await flow.b.open(choice!);
    expect(page.status, page.html).toBe(200);
    return flow.b.submit(formWith(page.html, "password"), { loginName, password }, page.url);
  }

  const links = async (id: string) => ok(await users.call("ListIDPLinks", { id })).result ?? [];

  it("writes no link for whoever knows the password but stops at the second factor; the provider alone then signs nobody in", async () => {
    const victim = await person();
    await withTotp(victim.id);
    const attacker = account(uniqueName("attacker"));
    const page = await linkWith(await viaGitHub(instanceIdp, attacker), victim.loginName);
    // The password was right: the second factor's step, not the end.
    expect(page.left, page.html).toBe(false);
    expect(page.status).toBe(200);
    expect(page.html).toContain(en.mfaTotpIntro);
    expect(await links(victim.id)).toEqual([]);

    // In any browser, the attacker's account at the provider is linked to nobody.
    const again = await viaGitHub(instanceIdp, attacker);
    expect(again.page.left, again.page.html).toBe(false);
    expect(again.page.html).toContain(en.externalNotLinked);
  });

  it("links after the password and the second factor; the link then asks for the second factor too", async () => {
    const person1 = await person();
    const secret = await withTotp(person1.id);
    const own = account(uniqueName("own"));
    const flow = await viaGitHub(instanceIdp, own);
    let page = await linkWith(flow, person1.loginName);
    expect(page.html).toContain(en.mfaTotpIntro);
    page = await flow.b.submit(formWith(page.html, "code"), { code: totpCode(secret, 1) }, page.url);
    expect((await tokensOf(rp, flow.request, page)).claims()!).toMatchObject({ sub: person1.id, amr: ["pwd", "fed", "otp", "mfa"] });
    expect(await links(person1.id)).toEqual([expect.objectContaining({ idpId: instanceIdp, externalUserId: String(own.profile.id) })]);

    // The provider alone no longer finishes the sign-in of a person with a second factor.
    const next = await viaGitHub(instanceIdp, own);
    expect(next.page.left, next.page.html).toBe(false);
    expect(next.page.html).toContain(en.mfaTotpIntro);
  });

  it("without a second factor, the password links and signs in at once (amr pwd and fed)", async () => {
    const plain = await person();
    const own = account(uniqueName("plain"));
    const flow = await viaGitHub(instanceIdp, own);
    const page = await linkWith(flow, plain.loginName);
    expect((await tokensOf(rp, flow.request, page)).claims()!).toMatchObject({ sub: plain.id, amr: ["pwd", "fed"] });
    const next = await viaGitHub(instanceIdp, own);
    expect((await tokensOf(rp, next.request, next.page)).claims()!).toMatchObject({ sub: plain.id, amr: ["fed"] });
  });

  it("refuses to link a user of another organization through a provider of an organization reached by login_hint", async () => {
    const other = await createOrg(server, uniqueName("Attacker Org"));
    const orgIdp = await gitHubIdp("Org GitHub", { orgId: other.id });
    const victim = await person();
    const attacker = account(uniqueName("crossorg"));
    const flow = await viaGitHub(orgIdp, attacker, { login_hint: `someone@${other.primary}` });
    const page = await linkWith(flow, victim.loginName);
    expect(page.left, page.html).toBe(false);
    expect(page.status).toBe(401);
    expect(alertText(page.html)).toBe(en.unknownUser);
    expect(await links(victim.id)).toEqual([]);
    // The provider's own organization's people can be linked through it.
    const member = await person(other.id);
    const own = account(uniqueName("member"));
    const ownFlow = await viaGitHub(orgIdp, own, { login_hint: `someone@${other.primary}` });
    const linked = await linkWith(ownFlow, member.loginName);
    expect((await tokensOf(rp, ownFlow.request, linked)).claims()!).toMatchObject({ sub: member.id, amr: ["pwd", "fed"] });
  });

  it("a provider of another organization with auto update neither signs in nor changes a person linked to it before this rule", async () => {
    const other = await createOrg(server, uniqueName("Updating Org"));
    const orgIdp = await gitHubIdp("Updating GitHub", { orgId: other.id }, { isAutoUpdate: true });
    const victim = await person();
    const attacker = account(uniqueName("updater"));
    // A link as an earlier release could make it (the API offers none).
    await linkAccount(server, server.instanceId, victim.id, {
      idpId: orgIdp,
      externalUserId: String(attacker.profile.id),
      username: attacker.profile.login,
      email: "",
    });
    const before = await users.get(victim.id);
    const flow = await viaGitHub(orgIdp, attacker, { login_hint: `someone@${other.primary}` });
    expect(flow.page.left, flow.page.html).toBe(false);
    expect([flow.page.status, alertText(flow.page.html)]).toEqual([403, en.unknownUser]);
    const after = await users.get(victim.id);
    expect(after.human).toEqual(before.human);
    expect(after.details.sequence).toBe(before.details.sequence);
  });

  it("neither links nor signs in people whose organization turns external login off", async () => {
    const org = await createOrg(server, uniqueName("No External"));
    const member = await person(org.id);
    const own = account(uniqueName("noext"));
    // Linked while the organization allowed it.
    const flow = await viaGitHub(instanceIdp, own);
    await tokensOf(rp, flow.request, await linkWith(flow, member.loginName));
    await loginSettings({ allowExternalIdp: { set: false } }, org.id);
    // The login starts in the default organization, which still shows the provider.
    const after = await viaGitHub(instanceIdp, own);
    expect(after.page.left, after.page.html).toBe(false);
    expect(after.page.status).toBe(403);
    expect(alertText(after.page.html)).toBe(en.unknownUser);
    // Nor can another of its people be linked.
    const second = await person(org.id);
    const refused = await linkWith(await viaGitHub(instanceIdp, account(uniqueName("noext2"))), second.loginName);
    expect([refused.status, alertText(refused.html)]).toEqual([401, en.unknownUser]);
    expect(await links(second.id)).toEqual([]);
  });

  it("wrong codes after an external login lock a person without a password (issue 41 §3)", async () => {
    const org = await createOrg(server, uniqueName("Strict"));
    await loginSettings({ maxPasswordAttempts: { set: 3 } }, org.id);
    const id = await users.create(humanUser(uniqueName("nopassword")), { orgId: org.id });
    const secret = await withTotp(id);
    const own = account(uniqueName("nopassword"));
    await linkAccount(server, server.instanceId, id, { idpId: instanceIdp, externalUserId: String(own.profile.id), username: own.profile.login, email: "" });
    const flow = await viaGitHub(instanceIdp, own);
    let page = flow.page;
    expect(page.html).toContain(en.mfaTotpIntro);
    for (let i = 0; i < 2; i++) {
      page = await flow.b.submit(formWith(page.html, "code"), { code: wrongTotpCode(secret) }, page.url);
      expect([page.status, alertText(page.html)]).toEqual([400, en.codeInvalid]);
    }
    page = await flow.b.submit(formWith(page.html, "code"), { code: wrongTotpCode(secret) }, page.url);
    expect([page.status, alertText(page.html)]).toEqual([403, en.userLocked]);
    expect((await users.get(id)).state).toBe("USER_STATE_LOCKED");
  });

  it("signs in again once an external login is older than external_login_check_lifetime (prompt=none: login_required)", async () => {
    const org = await createOrg(server, uniqueName("External lifetime"));
    const id = await users.create(humanUser(uniqueName("extlife")), { orgId: org.id });
    const own = account(uniqueName("extlife"));
    await linkAccount(server, server.instanceId, id, { idpId: instanceIdp, externalUserId: String(own.profile.id), username: own.profile.login, email: "" });
    const flow = await viaGitHub(instanceIdp, own);
    const authTime = (await tokensOf(rp, flow.request, flow.page)).claims()!.auth_time as number;
    await loginSettings({ externalLoginCheckLifetime: { set: "1s" } }, org.id);
    await new Promise((resolve) => setTimeout(resolve, (authTime + 2) * 1000 - Date.now() + 20));
    const request = await authorize(server, rp);
    const late = await flow.b.open(`${request.url}&prompt=none`);
    expect(late.left).toBe(true);
    expect(new URL(late.url).searchParams.get("error")).toBe("login_required");
  });

  it("lets people list and delete their own links, and nobody else's", async () => {
    const owner = await person();
    const own = account(uniqueName("selflinks"));
    const flow = await viaGitHub(instanceIdp, own);
    await tokensOf(rp, flow.request, await linkWith(flow, owner.loginName));
    const stranger = await person();
    const self = new Users(server, "connect", (await users.pat(owner.id)).token);
    const listed = ok(await self.call("ListIDPLinks", { id: owner.id })).result;
    expect(listed).toEqual([expect.objectContaining({ idpId: instanceIdp, externalUserId: String(own.profile.id) })]);
    failed(await self.call("ListIDPLinks", { id: stranger.id }), Code.PermissionDenied);
    failed(await self.call("DeleteIDPLink", { id: stranger.id, idpId: instanceIdp, externalUserId: String(own.profile.id) }), Code.PermissionDenied);
    ok(await self.call("DeleteIDPLink", { id: owner.id, idpId: instanceIdp, externalUserId: String(own.profile.id) }));
    expect(await links(owner.id)).toEqual([]);
  });
});
