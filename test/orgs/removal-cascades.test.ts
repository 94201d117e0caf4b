import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { listDetails } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { clients, createGrant, createMachineUser, createOrg, createProject, type Clients } from "../grants/helpers.js";

/**
 * A removal that takes other resources with it (an organization its projects, users and
 * grants; a user or a project its grants) changes the projections of those resources: their
 * searches' processed_sequence must move, or a client waiting for its write to show would
 * wait for nothing, and one comparing sequences would think nothing changed.
 */
describe.each(DATABASE_KINDS)("removals that cascade move processed_sequence (%s)", (kind) => {
  let server: TestServer;
  let c: Clients;
  beforeAll(async () => {
    server = await startTestServer(kind);
    c = clients(server.baseUrl, server.adminToken);
  });
  afterAll(() => server?.close());

  const processed = {
    projects: async () => listDetails(await c.projects.ok("SearchProjects", {})).processedSequence,
    grants: async () => listDetails(await c.grants.ok("SearchUserGrants", {})).processedSequence,
    users: async () => listDetails(await c.users.ok("SearchUsers", {})).processedSequence,
  };
  /** The searches' processed sequences before and after `removal`. */
  async function around(removal: () => Promise<unknown>, searches: (keyof typeof processed)[]) {
    const before = await Promise.all(searches.map((s) => processed[s]()));
    await removal();
    const after = await Promise.all(searches.map((s) => processed[s]()));
    return Object.fromEntries(searches.map((s, i) => [s, { before: before[i]!, after: after[i]! }]));
  }

  it("DeleteOrganization moves the searches of its projects, users and grants", async () => {
    const orgId = await createOrg(c);
    const projectId = await createProject(c, orgId, ["reader"]);
    const userId = await createMachineUser(c, orgId);
    await createGrant(c, projectId, userId, ["reader"]);
    const seen = await around(() => c.orgs.ok("DeleteOrganization", { id: orgId }), ["projects", "grants", "users"]);
    for (const [search, { before, after }] of Object.entries(seen)) expect(after > before, `${search}: ${before} -> ${after}`).toBe(true);
    expect((await c.projects.ok("SearchProjects", { filters: [{ inIds: { ids: [projectId] } }] })).result ?? []).toEqual([]);
  });

  it.each([
    ["DeleteUser", (ids: { userId: string }) => c.users.ok("DeleteUser", { id: ids.userId })],
    ["DeleteProject", (ids: { projectId: string }) => c.projects.ok("DeleteProject", { id: ids.projectId })],
  ] as const)("%s moves the search of its grants", async (_, remove) => {
    const projectId = await createProject(c, server.defaultOrgId, ["reader"]);
    const userId = await createMachineUser(c, server.defaultOrgId);
    await createGrant(c, projectId, userId, ["reader"]);
    const { grants } = await around(() => remove({ userId, projectId }), ["grants"]);
    expect(grants!.after > grants!.before).toBe(true);
  });
});
