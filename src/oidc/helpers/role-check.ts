import { errors, interactionPolicy, type KoaContextWithOIDC } from "oidc-provider";
import { hasUserGrantOn } from "../../domain/grant/queries.js";
import type { Db } from "../../store/db.js";

/**
 * The project's role check as the last check of the interaction policy (in the consent
 * prompt): it runs on every authorization request and resume that needs no earlier prompt,
 * so once the browser's session has an account, signed in just now or earlier (single
 * sign-on), and no way into an application passes it by. An application whose project has
 * project_role_check gets `access_denied` for a user without a grant on the project (one made
 * under an inactive project grant counts for nothing). Not before the login and account
 * selection prompts: a request that asks for a new sign-in (prompt=login, max_age,
 * select_account) shows the pages, where another person may sign in, and is checked for
 * whoever did on its resume.
 */
export function withRoleCheck(policy: interactionPolicy.DefaultPolicy, db: () => Db, instanceId: string): interactionPolicy.DefaultPolicy {
  const check = new interactionPolicy.Check(
    "project_role_check",
    "the user has no grant on the application's project, which requires one",
    async (ctx: KoaContextWithOIDC) => {
      const client = ctx.oidc.client!;
      const accountId = ctx.oidc.session?.accountId;
      const projectId = client["platform_project_id"] as string | undefined;
      if (accountId && projectId && client["platform_project_role_check"] === true && !(await hasUserGrantOn(db(), instanceId, accountId, projectId))) {
        throw new errors.AccessDenied("the user has no grant on the application's project, which requires one (project_role_check)");
      }
      return interactionPolicy.Check.NO_NEED_TO_PROMPT;
    },
  );
  policy.get("consent")!.checks.add(check);
  return policy;
}
