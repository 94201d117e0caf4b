import { useQuery } from "@connectrpc/connect-query";
import { PlatformMemberships } from "../../../gen/platform/resources/membership/v3alpha/membership_service_pb";
import { useScope } from "../scope";

/**
 * What the signed-in person may do in the chosen context, as the API says
 * (ListMyPermissions): the console shows only that, rather than guessing from refusals.
 * `inInstance`: in the instance whatever is chosen (its answer stays while another
 * organization's loads).
 */
export function usePermissions({ inInstance = false } = {}) {
  const { ctx } = useScope();
  const answer = useQuery(PlatformMemberships.method.listMyPermissions, { ctx: inInstance ? undefined : ctx });
  const held = new Set(answer.data?.permissions ?? []);
  return {
    loading: answer.isPending,
    error: answer.error,
    may: (permission: string) => held.has(permission),
    systemMember: answer.data?.systemMember ?? false,
    orgIds: answer.data?.orgIds ?? [],
  };
}
