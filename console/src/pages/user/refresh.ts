import { createConnectQueryKey } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";

/** Every answer about users is refetched after any change to one: a change to a credential changes what the user's page lists. */
export function useRefreshUsers() {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformUsers, cardinality: undefined }) });
}
