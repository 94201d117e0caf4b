import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { PlatformIDPIntents } from "../../../../gen/platform/resources/idp_intent/v3alpha/idp_intent_service_pb.js";
import type { SecretBox } from "../../../crypto/encryption.js";
import { retrieveIdpIntent } from "../../../domain/idp-intent/queries.js";
import { defaultOrgOf } from "../../../domain/user/login-names.js";
import { startIntent } from "../../../oidc/login/external/intents.js";
import type { Calls } from "../../../upstream-idps/clients.js";
import type { Store } from "../../../store/database.js";
import { actorOf, orgKey, tenantOf } from "../../context.js";
import { detailsToProto } from "../convert.js";
import { handlerStore } from "../writes.js";

/** What intents need beyond the store: the upstream calls, the issuers' scheme, PLATFORM_IDP_INTENT_TTL. */
export interface IdpIntentSettings {
  calls: Calls;
  scheme: string;
  ttlMs: number;
}

/** Translates between the API and oidc/login/external/intents.ts and domain/idp-intent, where the rules live. */
export function idpIntentsService({
  store,
  box,
  idpIntents,
}: {
  store: Pick<Store, "forRequest">;
  box: SecretBox;
  idpIntents: IdpIntentSettings;
}): ServiceImpl<typeof PlatformIDPIntents> {
  const { database, write } = handlerStore(store);
  // The provider returns to the host this call came to: the one the login UI uses for the instance.
  const issuerOf = (ctx: HandlerContext) => `${idpIntents.scheme}://${new URL(ctx.url).host.toLowerCase()}`;
  return {
    async startIDPIntent(req, ctx) {
      const { db } = database(ctx);
      const orgId = ctx.values.get(orgKey)?.id ?? (await defaultOrgOf(db, tenantOf(ctx).id));
      const started = await startIntent(
        { db, transact: (fn) => write(ctx, fn), box, calls: idpIntents.calls, ttlMs: idpIntents.ttlMs },
        actorOf(ctx),
        { idpId: req.idpId, orgId, successUrl: req.successUrl, failureUrl: req.failureUrl },
        issuerOf(ctx),
      );
      return { details: detailsToProto(started.details), idpIntentId: started.details.id, authUrl: started.authUrl };
    },
    async retrieveIDPIntent(req, ctx) {
      const intent = await retrieveIdpIntent(database(ctx).db, tenantOf(ctx).id, req.id, req.idpIntentToken);
      return {
        details: detailsToProto(intent.details),
        idpInformation: {
          idpId: intent.idpId,
          externalUserId: intent.externalUserId,
          externalUserName: intent.identity.username,
          email: intent.identity.email,
          emailVerified: intent.identity.emailVerified,
          givenName: intent.identity.givenName,
          familyName: intent.identity.familyName,
          displayName: intent.identity.displayName,
          preferredLanguage: intent.identity.preferredLanguage,
          // Through JSON: a Struct holds JSON values only (no undefined).
          rawInformation: JSON.parse(JSON.stringify(intent.raw)) as JsonObject,
        },
        userId: intent.userId ?? "",
        expirationDate: timestampFromDate(intent.expiresAt),
      };
    },
  };
}
