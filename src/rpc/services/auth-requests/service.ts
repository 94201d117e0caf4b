import type { ServiceImpl } from "@connectrpc/connect";
import { durationFromMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { PlatformAuthRequests } from "../../../../gen/platform/resources/oidc/v3alpha/auth_request_service_pb.js";
import type { SettingsKind } from "../../../domain/settings/kind.js";
import { authRequestOf, finalizeAuthRequest } from "../../../oidc/helpers/auth-requests.js";
import type { Store } from "../../../store/database.js";
import { tenantOf } from "../../context.js";

/** Translates between the API and oidc/helpers/auth-requests.ts, where the rules live. */
export function authRequestsService({
  store,
  loginSettings,
}: {
  store: Pick<Store, "forRequest">;
  loginSettings: SettingsKind;
}): ServiceImpl<typeof PlatformAuthRequests> {
  return {
    async getAuthRequest(req, ctx) {
      const r = await authRequestOf(store.forRequest(ctx.signal).db, tenantOf(ctx).id, req.id);
      return {
        authRequest: {
          id: r.id,
          creationDate: timestampFromDate(r.createdAt),
          clientId: r.clientId,
          scope: r.scope,
          redirectUri: r.redirectUri,
          prompt: r.prompt,
          loginHint: r.loginHint,
          ...(r.maxAgeS !== undefined && { maxAge: durationFromMs(r.maxAgeS * 1000) }),
          uiLocales: r.uiLocales,
        },
      };
    },
    async finalizeAuthRequest(req, ctx) {
      const callbackUrl = await finalizeAuthRequest(store.forRequest(ctx.signal).db, tenantOf(ctx).id, loginSettings, req.id, req.sessionId, req.sessionToken);
      return { callbackUrl };
    },
  };
}
