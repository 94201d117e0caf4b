import type { ServiceImpl } from "@connectrpc/connect";
import type { PlatformApps } from "../../../../gen/platform/resources/app/v3alpha/app_service_pb.js";
import { addApp, patchApp, regenerateAppSecret, removeApp, setAppState } from "../../../domain/app/commands.js";
import { addAppKey, removeAppKey, searchAppKeys } from "../../../domain/app/keys.js";
import { getApp, searchApps } from "../../../domain/app/queries.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import type { Store } from "../../../store/database.js";
import { page } from "../../../store/search.js";
import { actorOf, tenantOf, visibleOrgs } from "../../context.js";
import { detailsToProto, searchResult } from "../convert.js";
import { keyFromProto, keyToProto } from "../keys.js";
import { handlerStore } from "../writes.js";
import { appConfigFromProto, appFilterFromProto, appPatchFromProto, appSortFromProto, appToProto } from "./convert.js";

/**
 * Translates between the API and the domain; the rules live in domain/app. Every write
 * changes access: applications, their secrets and keys are cached as OAuth clients until
 * the next change (oidc/helpers/lookups.ts).
 */
export function appsService({ store, access }: { store: Pick<Store, "forRequest">; access: AccessEpoch }): ServiceImpl<typeof PlatformApps> {
  const { database, changingAccess: write } = handlerStore(store, access);
  return {
    async createApp(req, ctx) {
      const config = appConfigFromProto(req.app!);
      const created = await write(ctx, (tx) => addApp(tx, actorOf(ctx), req.projectId, { name: req.app!.name, config }));
      return { details: detailsToProto(created.details), clientId: created.clientId, clientSecret: created.clientSecret ?? "" };
    },
    async getApp(req, ctx) {
      return { app: appToProto(await getApp(database(ctx).db, tenantOf(ctx).id, req.id)) };
    },
    async searchApps(req, ctx) {
      const p = page(req.query);
      const found = await searchApps(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(appFilterFromProto),
        sort: appSortFromProto(req.sortingColumn),
        page: p,
        within: visibleOrgs(ctx),
      });
      return { ...searchResult(found, p, appToProto), sortingColumn: req.sortingColumn };
    },
    async patchApp(req, ctx) {
      const patched = await write(ctx, (tx) => patchApp(tx, actorOf(ctx), req.id, appPatchFromProto(req.app!)));
      return { details: detailsToProto(patched.details), clientSecret: patched.clientSecret ?? "" };
    },
    async deleteApp(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => removeApp(tx, actorOf(ctx), req.id))) };
    },
    async deactivateApp(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => setAppState(tx, actorOf(ctx), req.id, "inactive"))) };
    },
    async reactivateApp(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => setAppState(tx, actorOf(ctx), req.id, "active"))) };
    },
    async addAppKey(req, ctx) {
      const { material, expiresAt } = await keyFromProto(req.key!);
      const added = await write(ctx, (tx) => addAppKey(tx, actorOf(ctx), req.appId, material, expiresAt));
      return { details: detailsToProto(added.details), keyFile: added.keyFile };
    },
    async searchAppKeys(req, ctx) {
      const p = page(req.query);
      return searchResult(await searchAppKeys(database(ctx).db, tenantOf(ctx).id, req.appId, p), p, keyToProto);
    },
    async deleteAppKey(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => removeAppKey(tx, actorOf(ctx), req.appId, req.keyId))) };
    },
    async regenerateAppSecret(req, ctx) {
      const done = await write(ctx, (tx) => regenerateAppSecret(tx, actorOf(ctx), req.id));
      return { details: detailsToProto(done.details), clientSecret: done.clientSecret };
    },
  };
}
