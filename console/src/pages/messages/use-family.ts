import type { Transport } from "@connectrpc/connect";
import { createConnectQueryKey, useTransport } from "@connectrpc/connect-query";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { ProviderFamily } from "./families";

/** Every answer about a family's providers is fetched again after a change to one. */
export function useRefresh(family: ProviderFamily<unknown, unknown>) {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: family.service, cardinality: undefined }) });
}

/** A change through one of the family's RPCs, with the console's transport; `refresh`: the answers about the family fetched again after it. */
export function useFamilyCall<In, Out>(family: ProviderFamily<unknown, unknown>, call: (transport: Transport, input: In) => Promise<Out>, refresh = true) {
  const transport = useTransport();
  const again = useRefresh(family);
  return useMutation({ mutationFn: (input: In) => call(transport, input), onSuccess: refresh ? again : undefined });
}
