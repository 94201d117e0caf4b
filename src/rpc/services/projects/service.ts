import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { PlatformProjects } from "../../../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import type { ObjectDetails } from "../../../domain/details.js";
import {
  addProject,
  addProjectRole,
  patchProject,
  patchProjectRole,
  removeProject,
  removeProjectRole,
  setProjectState,
} from "../../../domain/project/commands.js";
import { getProject, searchProjectRoles, searchProjects } from "../../../domain/project/queries.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import type { Store } from "../../../store/database.js";
import type { Tx } from "../../../store/db.js";
import { page } from "../../../store/search.js";
import { actingOrg, actorOf, tenantOf, visibleOrgs } from "../../context.js";
import { detailsToProto, searchResult } from "../convert.js";
import { handlerStore } from "../writes.js";
import { projectFilterFromProto, projectSortFromProto, projectToProto, roleFilterFromProto, roleSortFromProto, roleToProto } from "./convert.js";

/** Translates between the API and the domain; the rules live in domain/project. */
export function projectsService({ store, access }: { store: Pick<Store, "forRequest">; access: AccessEpoch }): ServiceImpl<typeof PlatformProjects> {
  const { changingAccess, database, write } = handlerStore(store, access);
  const details = async (ctx: HandlerContext, fn: (tx: Tx) => Promise<ObjectDetails>) => ({ details: detailsToProto(await write(ctx, fn)) });
  // A project's state decides whether its applications are clients and whether it may be an
  // audience, and its role check who signs in to them, all cached until the next change of
  // access (oidc/helpers/lookups.ts).
  const stateChange = async (ctx: HandlerContext, fn: (tx: Tx) => Promise<ObjectDetails>) => ({ details: detailsToProto(await changingAccess(ctx, fn)) });

  return {
    createProject(req, ctx) {
      const { name, projectRoleAssertion, projectRoleCheck } = req.project!;
      return details(ctx, (tx) => addProject(tx, actorOf(ctx), actingOrg(ctx), { name, roleAssertion: projectRoleAssertion, roleCheck: projectRoleCheck }));
    },
    async getProject(req, ctx) {
      return { project: projectToProto(await getProject(database(ctx).db, tenantOf(ctx).id, req.id)) };
    },
    async searchProjects(req, ctx) {
      const p = page(req.query);
      const found = await searchProjects(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(projectFilterFromProto),
        sort: projectSortFromProto(req.sortingColumn),
        page: p,
        within: visibleOrgs(ctx),
      });
      return { ...searchResult(found, p, projectToProto), sortingColumn: req.sortingColumn };
    },
    patchProject(req, ctx) {
      const { name, projectRoleAssertion, projectRoleCheck } = req.project!;
      return stateChange(ctx, (tx) => patchProject(tx, actorOf(ctx), req.id, { name, roleAssertion: projectRoleAssertion, roleCheck: projectRoleCheck }));
    },
    deleteProject(req, ctx) {
      return stateChange(ctx, (tx) => removeProject(tx, actorOf(ctx), req.id));
    },
    deactivateProject(req, ctx) {
      return stateChange(ctx, (tx) => setProjectState(tx, actorOf(ctx), req.id, "inactive"));
    },
    reactivateProject(req, ctx) {
      return stateChange(ctx, (tx) => setProjectState(tx, actorOf(ctx), req.id, "active"));
    },
    addProjectRole(req, ctx) {
      const { key, displayName, group } = req.role!;
      return details(ctx, (tx) => addProjectRole(tx, actorOf(ctx), req.projectId, { key, displayName, group }));
    },
    patchProjectRole(req, ctx) {
      return details(ctx, (tx) => patchProjectRole(tx, actorOf(ctx), req.projectId, req.key, { displayName: req.role!.displayName, group: req.role!.group }));
    },
    removeProjectRole(req, ctx) {
      return details(ctx, (tx) => removeProjectRole(tx, actorOf(ctx), req.projectId, req.key));
    },
    async searchProjectRoles(req, ctx) {
      const p = page(req.query);
      const found = await searchProjectRoles(database(ctx).db, tenantOf(ctx).id, req.projectId, {
        filters: req.filters.map(roleFilterFromProto),
        sort: roleSortFromProto(req.sortingColumn),
        page: p,
      });
      return { ...searchResult(found, p, roleToProto), sortingColumn: req.sortingColumn };
    },
  };
}
