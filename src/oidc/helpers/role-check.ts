import { errors, type KoaContextWithOIDC } from "oidc-provider";
import { hasUserGrantOn } from "../../domain/grant/queries.js";
import type { Db } from "../../store/db.js";

/**
 * The provider's loadExistingGrant with the project's role check in front: it runs on every
 * authorization request and resume once the browser's session has an account, signed in just
 * now or earlier (single sign-on), so no way into an application passes it by. An application
 * whose project has project_role_check gets `access_denied` for a user without a grant on
 * the project (one made under an inactive project grant counts for nothing). The rest is the
 * provider's default: the grant this client was given in this session, if any.
 */
export function roleCheckedGrant(db: () => Db, instanceId: string) {
  return async (ctx: KoaContextWithOIDC) => {
    const client = ctx.oidc.client!;
    const accountId = ctx.oidc.session!.accountId!;
    const projectId = client["platform_project_id"] as string | undefined;
    if (projectId && client["platform_project_role_check"] === true && !(await hasUserGrantOn(db(), instanceId, accountId, projectId))) {
      throw new errors.AccessDenied("the user has no grant on the application's project, which requires one (project_role_check)");
    }
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(client.clientId);
    return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
  };
}
