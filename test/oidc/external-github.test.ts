import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { idpClient } from "../idps/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { failed, ok, uniqueName, Users } from "../users/helpers.js";
import { Browser, formWith } from "./browser.js";
import { authorize, createRp, providerForm, tokensOf, type App } from "./external-helpers.js";
import { startFakeGitHub, type FakeGitHub, type GitHubAccount } from "./fake-github.js";

/*
 * External login with a GitHub provider, whose fixed endpoints PLATFORM_GITHUB_URL and
 * PLATFORM_GITHUB_API_URL point at a fake GitHub on 127.0.0.1 (fake-github.ts); and the links
 * such a login makes, through ListIDPLinks and DeleteIDPLink.
 */

let githubIds = 5000;

/** A GitHub account named `login` with the given addresses (undefined: no answer at /user/emails). */
function account(login: string, publicEmail: string | null, emails?: GitHubAccount["emails"]): GitHubAccount {
  return { profile: { id: ++githubIds, login, name: "Octo Cat", email: publicEmail }, ...(emails && { emails }) };
}

const address = (email: string, primary: boolean, verified: boolean) => ({ email, primary, verified, visibility: primary ? "private" : null });

describe.each(DATABASE_KINDS)("external login with GitHub (%s)", (kind) => {
  let github: FakeGitHub;
  let down: TestServer;
  let rp: App;
  let idpId: string;

  beforeAll(async () => {
    github = await startFakeGitHub();
    down = await startTestServer(kind, github.env);
    rp = await createRp(down);
    const options = { isAutoCreation: true, autoLinking: "AUTO_LINKING_OPTION_EMAIL" };
    const made = await idpClient(down.baseUrl, down.adminToken).ok("CreateGitHubIDP", {
      idp: { idp: { name: "GitHub", options }, config: { clientId: github.clientId, clientSecret: github.clientSecret } },
    });
    idpId = made.details.id as string;
  }, 120_000);
  afterAll(async () => {
    await down?.close();
    await github?.close();
  });

  /** A downstream login through the GitHub button as `who`: the page the downstream answers after GitHub's return. */
  async function viaGitHub(who: GitHubAccount) {
    github.account = who;
    const b = new Browser(down.baseUrl);
    const request = await authorize(down, rp);
    let page = await b.open(request.url);
    page = await b.submit(providerForm(page, idpId)!, {}, page.url);
    expect(page.left, page.html).toBe(true);
    expect(page.url.startsWith(`${github.url}/login/oauth/authorize?`), page.url).toBe(true);
    const back = await new Browser(github.url).open(page.url);
    expect(back.left, back.html).toBe(true);
    return { request, page: await b.open(back.url) };
  }

  /** The user a login through GitHub signed in. */
  async function signedIn(who: GitHubAccount) {
    const flow = await viaGitHub(who);
    const sub = (await tokensOf(rp, flow.request, flow.page)).claims()!.sub;
    return new Users(down).get(sub);
  }

  it("takes the primary address of /user/emails, verified as GitHub says, not the profile's public one", async () => {
    const name = uniqueName("octo");
    const user = await signedIn(
      account(name, `${name}-public@mail.example`, [address(`${name}-old@mail.example`, false, true), address(`${name}@mail.example`, true, true)]),
    );
    expect(user.username).toBe(name);
    expect(user.human.email).toEqual({ address: `${name}@mail.example`, isVerified: true });
  });

  it("keeps a primary address GitHub has not verified unverified, even without a public one", async () => {
    const name = uniqueName("octo");
    const user = await signedIn(account(name, null, [address(`${name}@mail.example`, true, false), address(`${name}-old@mail.example`, false, true)]));
    expect(user.human.email).toEqual({ address: `${name}@mail.example` });
  });

  it("without /user/emails (no scope user:email) takes the public address, unverified", async () => {
    const name = uniqueName("octo");
    const user = await signedIn(account(name, `${name}-public@mail.example`));
    expect(user.human.email).toEqual({ address: `${name}-public@mail.example` });
  });

  it("lists the link a login made and deletes it: the next login with the account no longer signs the user in", async () => {
    const name = uniqueName("linked");
    const who = account(name, null, [address(`${name}@mail.example`, true, true)]);
    const user = await signedIn(who);
    const userId = user.details.id as string;
    const users = new Users(down);
    const externalUserId = String(who.profile.id);
    const listed = ok(await users.call("ListIDPLinks", { id: userId }));
    expect(listed).toMatchObject({ details: { totalResult: "1", endOfList: true } });
    expect(listed.result).toEqual([
      {
        idpId,
        idpName: "GitHub",
        externalUserId,
        externalUserName: name,
        details: { changeDate: expect.any(String), resourceOwner: { type: "OWNER_TYPE_ORG", id: down.defaultOrgId } },
      },
    ]);
    // Linked: the next login signs the same user in.
    expect((await signedIn(who)).details.id).toBe(userId);

    const deleted = ok(await users.call("DeleteIDPLink", { id: userId, idpId, externalUserId }));
    expect(deleted.details).toMatchObject({ id: userId, sequence: String(Number(user.details.sequence) + 1) });
    expect(ok(await users.call("ListIDPLinks", { id: userId })).result ?? []).toEqual([]);
    failed(await users.call("DeleteIDPLink", { id: userId, idpId, externalUserId }), Code.NotFound);
    const events = await down.service.store.db
      .selectFrom("events")
      .select(["event_type", "payload"])
      .where("aggregate_type", "=", "user")
      .where("aggregate_id", "=", userId)
      .orderBy("sequence")
      .execute();
    expect(events.map((e) => e.event_type)).toContain("user.idp.link.added");
    expect(events.at(-1)).toEqual({ event_type: "user.idp.link.removed", payload: { idpId, externalUserId } });

    // Not linked any more: as for an account never linked, auto linking by the verified
    // address proposes the user, whose password would link it again; nobody is signed in.
    const after = await viaGitHub(who);
    expect(after.page.left, after.page.html).toBe(false);
    expect(after.page.status).toBe(200);
    expect(after.page.html).toContain(TEXTS.en.externalLinkProposal);
    expect(formWith(after.page.html, "password").visible).toEqual(["password"]);
  });
});
