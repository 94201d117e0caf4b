import { useQuery } from "@connectrpc/connect-query";
import { useMemo } from "react";
import type { GetUser } from "../../../gen/platform/resources/user/v3alpha/user_pb";
import { PlatformUsers } from "../../../gen/platform/resources/user/v3alpha/user_service_pb";

/**
 * The users a page of other resources names (grants, memberships), in one search, where the
 * person may read users. Users this instance's search does not answer (system members of
 * other instances) are missing: their rows keep the ID.
 */
export function useUsersById(ids: string[], readable: boolean): Map<string, GetUser> {
  const filters = [{ filter: { case: "inIds" as const, value: { ids } } }];
  const found = useQuery(PlatformUsers.method.searchUsers, { filters, query: { limit: ids.length } }, { enabled: readable && ids.length > 0 });
  return useMemo(() => new Map((found.data?.result ?? []).map((u) => [u.details?.id ?? "", u])), [found.data]);
}
