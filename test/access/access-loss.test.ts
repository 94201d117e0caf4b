import type { DescService, JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Losing access takes effect at the very next call, on the process that made the change:
 * deactivating an organization locks its users out until it is reactivated; deleting it
 * ends its users' tokens and memberships, and every membership in it. Each change follows a
 * successful call of the same caller, so that a cached decision would be served if the
 * cache were not invalidated.
 */

const ORGS = PlatformOrganizations;
const DOMAINS = PlatformDomains;

async function must(r: Promise<CallResult>, what: string): Promise<JsonObject> {
  const result = await r;
  if (!result.ok) throw new Error(`${what}: ${Code[result.code]} ${result.message}`);
  return result.message;
}

function expectCode(result: CallResult, code: Code, status: number, label: string) {
  expect(result, label).toMatchObject({ ok: false, code });
  if (result.httpStatus !== undefined) expect(result.httpStatus, label).toBe(status);
}

const idsOf = (m: JsonObject) => ((m.result ?? []) as JsonObject[]).map((o) => String((o.details as JsonObject).id)).sort();

describe.each(DATABASE_KINDS)("access ends with the organization (%s)", (kind) => {
  let server: TestServer;
  let x: string;
  let y: string;
  let w: string;
  /** A user of X, who is ORG_OWNER of Y. */
  let userOfX: { userId: string; token: string };
  /** A user of the default organization, ORG_OWNER of X and ORG_OWNER_VIEWER of W. */
  let ownerOfX: { userId: string; token: string };
  /** A user of the default organization whose only membership is ORG_OWNER of X. */
  let onlyInX: { userId: string; token: string };

  const client = (service: DescService, protocol: Protocol) => protocolClient(service, protocol, server.baseUrl);
  const admin = (service: DescService, method: string, req: JsonObject) => client(service, "grpc").call(method, req, server.adminToken);
  const createOrg = async (name: string) =>
    String(((await must(admin(ORGS, "CreateOrganization", { organization: { name } }), `create ${name}`)).details as JsonObject).id);

  beforeAll(async () => {
    server = await startTestServer(kind);
    x = await createOrg("Loss X");
    y = await createOrg("Loss Y");
    w = await createOrg("Loss W");
    // createUser puts its users into the default organization: make X the default for a moment.
    await must(admin(ORGS, "SetAsInstanceDefault", { id: x }), "X becomes the default");
    userOfX = await server.createUser({ roles: [{ context: "org", contextId: y, roles: ["ORG_OWNER"] }] });
    await must(admin(ORGS, "SetAsInstanceDefault", { id: server.defaultOrgId }), "the default is restored");
    ownerOfX = await server.createUser({
      roles: [
        { context: "org", contextId: x, roles: ["ORG_OWNER"] },
        { context: "org", contextId: w, roles: ["ORG_OWNER_VIEWER"] },
      ],
    });
    onlyInX = await server.createUser({ roles: [{ context: "org", contextId: x, roles: ["ORG_OWNER"] }] });
    const users = await server.service.store.db.selectFrom("users").select(["id", "org_id"]).where("id", "in", [userOfX.userId, ownerOfX.userId]).execute();
    expect(Object.fromEntries(users.map((u) => [u.id, u.org_id]))).toEqual({ [userOfX.userId]: x, [ownerOfX.userId]: server.defaultOrgId });
  });
  afterAll(() => server?.close());

  it.each(PROTOCOLS)("deactivating X locks its user out at the next call, and reactivating lets it back, over %s", async (protocol) => {
    const orgs = client(ORGS, protocol);
    // Warm: the user's principal is now cached by this process.
    expect(await orgs.call("GetOrganization", { id: y }, userOfX.token), "before").toMatchObject({ ok: true });
    expect(await orgs.call("GetOrganization", { id: y }, userOfX.token), "before, cached").toMatchObject({ ok: true });
    expect(await orgs.call("GetOrganization", { id: x }, ownerOfX.token), "owner of X before").toMatchObject({ ok: true });

    await must(admin(ORGS, "DeactivateOrganization", { id: x }), "X deactivated");
    expectCode(await orgs.call("GetOrganization", { id: y }, userOfX.token), Code.Unauthenticated, 401, "right after the deactivation");
    expectCode(await client(DOMAINS, protocol).call("SearchDomains", {}, userOfX.token), Code.Unauthenticated, 401, "any other call");
    // Who merely belongs to the default organization still gets in.
    expect(await orgs.call("GetOrganization", { id: w }, ownerOfX.token), "a user of another organization").toMatchObject({ ok: true });

    await must(admin(ORGS, "ReactivateOrganization", { id: x }), "X reactivated");
    expect(await orgs.call("GetOrganization", { id: y }, userOfX.token), "right after the reactivation").toMatchObject({ ok: true });
    expect(
      await orgs.call("PatchOrganization", { id: y, organization: { name: `Loss Y ${protocol}` } }, userOfX.token),
      "its ORG_OWNER membership in Y counts again",
    ).toMatchObject({ ok: true });
  });

  it("deleting X ends its users, their memberships elsewhere, and every membership in X, at the next call", async () => {
    const xDomains = await must(admin(DOMAINS, "SearchDomains", { ctx: { orgId: x } }), "X's domains");
    const orgs = client(ORGS, "grpc");
    const domains = client(DOMAINS, "grpc");
    // Warm every caller, each through the access it is about to lose.
    expect(await orgs.call("PatchOrganization", { id: y, organization: { name: "Loss Y by X's user" } }, userOfX.token)).toMatchObject({ ok: true });
    expect(idsOf(await must(orgs.call("SearchOrganizations", {}, ownerOfX.token), "owner of X searches"))).toEqual([x, w].sort());
    expect(await orgs.call("GetOrganization", { id: x }, ownerOfX.token)).toMatchObject({ ok: true });
    expect(await domains.call("AddDomain", { domain: { domain: "by-owner.loss.example" }, ctx: { orgId: x } }, ownerOfX.token)).toMatchObject({ ok: true });
    expect(idsOf(await must(orgs.call("SearchOrganizations", {}, onlyInX.token), "only-in-X searches"))).toEqual([x]);
    expect(await domains.call("SearchDomains", {}, onlyInX.token)).toMatchObject({ ok: true });

    await must(admin(ORGS, "DeleteOrganization", { id: x }), "X deleted");

    for (const protocol of PROTOCOLS) {
      const o = client(ORGS, protocol);
      const d = client(DOMAINS, protocol);
      const label = (what: string) => `${protocol}: ${what}`;
      // X's user: its token is gone with it, and so is its ORG_OWNER membership in Y.
      expectCode(await o.call("GetOrganization", { id: y }, userOfX.token), Code.Unauthenticated, 401, label("X's user reads Y"));
      expectCode(
        await o.call("PatchOrganization", { id: y, organization: { name: "Loss Y after" } }, userOfX.token),
        Code.Unauthenticated,
        401,
        label("X's user renames Y"),
      );
      expectCode(await o.call("SearchOrganizations", {}, userOfX.token), Code.Unauthenticated, 401, label("X's user searches"));

      // The owner of X (a user of the default organization) keeps only what W gives it.
      expect(idsOf(await must(o.call("SearchOrganizations", {}, ownerOfX.token), label("owner of X searches"))), label("owner of X searches")).toEqual([w]);
      expectCode(await o.call("GetOrganization", { id: x }, ownerOfX.token), Code.NotFound, 404, label("owner of X reads X (it still reads W)"));
      expectCode(
        await o.call("PatchOrganization", { id: x, organization: { name: "Loss X again" } }, ownerOfX.token),
        Code.PermissionDenied,
        403,
        label("owner of X renames X (org.write nowhere now)"),
      );
      expectCode(
        await o.call("PatchOrganization", { id: w, organization: { name: "Loss W renamed" } }, ownerOfX.token),
        Code.PermissionDenied,
        403,
        label("owner of X renames W (a viewer there)"),
      );
      const seen = await must(d.call("SearchDomains", { query: { limit: 1000 } }, ownerOfX.token), label("owner of X searches domains"));
      expect(
        ((seen.result ?? []) as JsonObject[]).map((r) => ((r.details as JsonObject).resourceOwner as JsonObject).id),
        label("only W's domains"),
      ).toEqual([w]);

      // Who had access only through X has none left: 403, not an empty answer.
      expectCode(await o.call("SearchOrganizations", {}, onlyInX.token), Code.PermissionDenied, 403, label("only-in-X searches organizations"));
      expectCode(await d.call("SearchDomains", {}, onlyInX.token), Code.PermissionDenied, 403, label("only-in-X searches domains"));
      expectCode(await o.call("GetOrganization", { id: x }, onlyInX.token), Code.PermissionDenied, 403, label("only-in-X reads X"));
      expectCode(await o.call("GetOrganization", { id: w }, onlyInX.token), Code.PermissionDenied, 403, label("only-in-X reads W"));
    }

    // What the service keeps of it: nothing.
    const db = server.service.store.db;
    expect(await db.selectFrom("users").select("id").where("org_id", "=", x).execute(), "users of X").toEqual([]);
    expect(await db.selectFrom("memberships").select("context_id").where("user_id", "=", userOfX.userId).execute(), "memberships of X's user").toEqual([]);
    expect(
      await db.selectFrom("memberships").select("user_id").where("context_type", "=", "org").where("context_id", "=", x).execute(),
      "memberships in X",
    ).toEqual([]);
    expect(await db.selectFrom("personal_access_tokens").select("id").where("user_id", "=", userOfX.userId).execute(), "tokens of X's user").toEqual([]);
    const domainsNow = await must(admin(DOMAINS, "SearchDomains", { query: { limit: 1000 } }), "admin searches domains");
    const remaining = ((domainsNow.result ?? []) as JsonObject[]).map((r) => String(r.domain));
    for (const domain of [...((xDomains.result ?? []) as JsonObject[]).map((r) => String(r.domain)), "by-owner.loss.example"]) {
      expect(remaining, `${domain} went with X`).not.toContain(domain);
    }
    // Y is intact, with the last name X's user gave it.
    expect(await admin(ORGS, "GetOrganization", { id: y })).toMatchObject({ ok: true, message: { organization: { name: "Loss Y by X's user" } } });
  });
});
