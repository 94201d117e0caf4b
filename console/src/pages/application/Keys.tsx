import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { PlatformApps } from "../../../../gen/platform/resources/app/v3alpha/app_service_pb";
import { KeysSection } from "../../components/KeysSection";

/** The keys an application signs its client assertions with (private_key_jwt). */
export function Keys({ appId, mayWrite }: { appId: string; mayWrite: boolean }) {
  const queries = useQueryClient();
  const found = useQuery(PlatformApps.method.searchAppKeys, { appId, query: { limit: 100 } });
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformApps, cardinality: undefined }) });
  const add = useMutation(PlatformApps.method.addAppKey, { onSuccess: refresh });
  const remove = useMutation(PlatformApps.method.deleteAppKey, { onSuccess: refresh });
  return (
    <KeysSection
      rows={found.data?.result ?? []}
      pending={found.isPending}
      error={found.error ?? remove.error}
      empty="No keys yet: the application cannot authenticate until it has one."
      mayWrite={mayWrite}
      onAdd={(key) => add.mutate({ appId, key })}
      added={{ pending: add.isPending, error: add.error, keyId: add.data?.details?.id, keyFile: add.data?.keyFile }}
      onRemove={(keyId) => remove.mutate({ appId, keyId })}
      removing={remove.isPending}
    />
  );
}
