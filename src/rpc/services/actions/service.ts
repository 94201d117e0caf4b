import type { ServiceImpl } from "@connectrpc/connect";
import { PlatformActions } from "../../../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import type { SecretBox } from "../../../crypto/encryption.js";
import type { ExecutionCatalog } from "../../../domain/action/execution/catalog.js";
import { deleteExecution, putExecution } from "../../../domain/action/execution/commands.js";
import { searchExecutions } from "../../../domain/action/execution/queries.js";
import { EVENT_TYPES, eventGroups } from "../../../domain/action/execution/events.js";
import { retryDelivery } from "../../../domain/action/delivery/commands.js";
import { searchDeliveries } from "../../../domain/action/delivery/queries.js";
import { deliveryFilterFromProto, deliveryToProto } from "./convert-delivery.js";
import { createTarget, deleteTarget, patchTarget, targetNameTaken } from "../../../domain/action/target/commands.js";
import { getTarget, searchTargets } from "../../../domain/action/target/queries.js";
import type { Store } from "../../../store/database.js";
import { page } from "../../../store/search.js";
import { actorOf, tenantOf } from "../../context.js";
import { handlerStore } from "../writes.js";
import { detailsToProto, searchResult } from "../convert.js";
import { conditionFromProto, conditionToProto, executionFilterFromProto } from "./convert-execution.js";
import { targetFilterFromProto, targetPatchFromProto, targetSortFromProto, targetSpecFromProto, targetToProto } from "./convert-target.js";

export interface ActionsDeps {
  /** The database as each call sees it: bounded by the call's deadline. */
  store: Pick<Store, "forRequest">;
  box: SecretBox;
  catalog: ExecutionCatalog;
  /** Calls cache what their executions call (actions/plans.ts) until the next change of access. */
  access: AccessEpoch;
}

/** Translates between the API and the domain; the rules live in domain/action. */
export function actionsService({ store, box, catalog, access }: ActionsDeps): ServiceImpl<typeof PlatformActions> {
  const { database, write, changingAccess } = handlerStore(store, access);
  return {
    async createTarget(req, ctx) {
      const spec = targetSpecFromProto(req.target!);
      const { details, signingKey } = await write(ctx, (tx) => createTarget(tx, actorOf(ctx), spec, box)).catch((error: unknown) =>
        Promise.reject(targetNameTaken(error, spec.name)),
      );
      return { details: detailsToProto(details), signingKey };
    },
    async patchTarget(req, ctx) {
      const patch = targetPatchFromProto(req.target!);
      const result = await changingAccess(ctx, (tx) => patchTarget(tx, actorOf(ctx), req.id, patch, box)).catch((error: unknown) =>
        Promise.reject(patch.name === undefined ? error : targetNameTaken(error, patch.name)),
      );
      return { details: detailsToProto(result.details), ...(result.signingKey && { signingKey: result.signingKey }) };
    },
    async deleteTarget(req, ctx) {
      const details = await changingAccess(ctx, (tx) => deleteTarget(tx, actorOf(ctx), req.id));
      return { details: detailsToProto(details) };
    },
    async getTarget(req, ctx) {
      const view = await getTarget(database(ctx).db, tenantOf(ctx).id, req.id);
      return { target: { details: detailsToProto(view.details), target: targetToProto(view) } };
    },
    async searchTargets(req, ctx) {
      const p = page(req.query);
      const found = await searchTargets(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(targetFilterFromProto),
        sort: targetSortFromProto(req.sortingColumn),
        page: p,
      });
      return {
        ...searchResult(found, p, (v) => ({ details: detailsToProto(v.details), target: targetToProto(v) })),
        sortingColumn: req.sortingColumn,
      };
    },
    async putExecution(req, ctx) {
      const execution = req.execution!;
      const spec = {
        condition: conditionFromProto(execution.condition!),
        targets: execution.targets,
        includes: execution.includes,
      };
      const { details, created } = await changingAccess(ctx, (tx) => putExecution(tx, actorOf(ctx), spec, catalog));
      return { details: detailsToProto(details), created };
    },
    async deleteExecution(req, ctx) {
      const details = await changingAccess(ctx, (tx) => deleteExecution(tx, actorOf(ctx), req.id));
      return { details: detailsToProto(details) };
    },
    async searchExecutions(req, ctx) {
      const p = page(req.query);
      const found = await searchExecutions(database(ctx).db, tenantOf(ctx).id, req.filters.map(executionFilterFromProto), p);
      return searchResult(found, p, (v) => ({
        details: detailsToProto(v.details),
        execution: { condition: conditionToProto(v.condition), targets: v.targets, includes: v.includes },
      }));
    },
    listAvailableExecutionFunctions() {
      return { functions: [...catalog.functions].sort() };
    },
    listAvailableExecutionMethods() {
      return { methods: [...catalog.methods].sort() };
    },
    listAvailableExecutionServices() {
      return { services: [...catalog.services].sort() };
    },
    listAvailableExecutionEvents() {
      return { events: [...EVENT_TYPES].sort(), groups: eventGroups() };
    },
    async searchDeliveries(req, ctx) {
      const p = page(req.query);
      const found = await searchDeliveries(database(ctx).db, tenantOf(ctx).id, req.filters.map(deliveryFilterFromProto), p);
      return searchResult(found, p, deliveryToProto);
    },
    async retryDelivery(req, ctx) {
      const row = await write(ctx, (tx) => retryDelivery(tx, tenantOf(ctx).id, req.id));
      return { delivery: deliveryToProto(row) };
    },
  };
}
