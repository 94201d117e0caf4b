import { useMutation, useQuery } from "@connectrpc/connect-query";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { KeysSection } from "../../components/KeysSection";
import { useScope } from "../../scope";
import { useRefreshUsers } from "./refresh";

/** The keys a service account, or a schema user whose schema allows them, signs its JWT assertions with (the jwt-bearer grant). */
export function Keys({ userId, mayWrite }: { userId: string; mayWrite: boolean }) {
  const { ctx } = useScope();
  const refresh = useRefreshUsers();
  const found = useQuery(PlatformUsers.method.searchKeys, { id: userId, ctx, query: { limit: 100 } });
  const add = useMutation(PlatformUsers.method.addKey, { onSuccess: refresh });
  const remove = useMutation(PlatformUsers.method.deleteKey, { onSuccess: refresh });
  return (
    <KeysSection
      rows={found.data?.result ?? []}
      pending={found.isPending}
      error={found.error ?? remove.error}
      empty="No keys: the account cannot sign JWT assertions until it has one."
      mayWrite={mayWrite}
      onAdd={(key) => add.mutate({ id: userId, ctx, key })}
      added={{ pending: add.isPending, error: add.error, keyId: add.data?.details?.id, keyFile: add.data?.keyFile }}
      onRemove={(keyId) => remove.mutate({ id: userId, ctx, keyId })}
      removing={remove.isPending}
    />
  );
}
