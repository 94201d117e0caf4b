import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ACTIVATE, DEACTIVATE, createOrg, gitlab, idpClient, type Idps } from "./helpers.js";

/** Deleting an organization removes its policies, also those set while it is being deleted. */
describe.each(DATABASE_KINDS)("identity provider policies and concurrent organization deletion (%s)", (kind) => {
  let server: TestServer;
  let idps: Idps;
  beforeAll(async () => {
    server = await startTestServer(kind);
    idps = idpClient(server.baseUrl, server.adminToken);
  });
  afterAll(() => server?.close());

  it("leaves no policy of a deleted organization behind", async () => {
    const id = (await idps.ok("CreateGitLabIDP", { idp: gitlab("Race GitLab") })).details.id;
    const sys = (await idps.ok("CreateGitLabIDP", { idp: gitlab("Race System"), ctx: { system: true } })).details.id;
    const orgs = protocolClient(PlatformOrganizations, "grpc", server.baseUrl);
    for (let round = 0; round < 10; round++) {
      const org = await createOrg(server.baseUrl, server.adminToken, `Race Org ${round}`);
      const patches = Array.from({ length: 6 }, (_, i) =>
        new Promise((r) => setTimeout(r, i)).then(() =>
          idps.call("PatchGitLabIDP", { id: i % 3 ? id : sys, ctx: { orgId: org }, idp: { idp: { statePolicy: i % 2 ? DEACTIVATE : ACTIVATE } } }),
        ),
      );
      const [deleted, ...patched] = await Promise.all([orgs.call("DeleteOrganization", { id: org }, server.adminToken), ...patches]);
      expect(deleted, JSON.stringify(deleted)).toMatchObject({ ok: true });
      for (const r of patched) if (!r.ok) expect(r.code, r.message).toBe(Code.NotFound);
      const left = await server.service.store.db.selectFrom("idp_state_policies").selectAll().where("org_id", "=", org).execute();
      expect(left, `round ${round}`).toEqual([]);
    }
  });
});
