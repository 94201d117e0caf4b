import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate, useParams } from "@tanstack/react-router";
import { useForm } from "react-hook-form";
import { PlatformActions } from "../../../gen/platform/resources/action/v3alpha/action_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { ConfirmAction } from "../components/ConfirmAction";
import { SecretOnce } from "../components/SecretOnce";
import { SettingsForm } from "../components/SettingsForm";
import { ActionsTabs } from "./actions/ActionsTabs";
import { TargetFields } from "./actions/TargetFields";
import { targetFields, targetValues, type TargetValues } from "./actions/target-form";
import { ResourceTabs, TABS } from "./events/ResourceTabs";

/** One target: its settings, a new signing key (shown once), deleting it. */
export function Target() {
  const { targetId } = useParams({ from: "/actions/targets/$targetId" });
  const { may } = usePermissions();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformActions, cardinality: undefined }) });
  const target = useQuery(PlatformActions.method.getTarget, { id: targetId });
  const form = useForm<TargetValues>({ values: targetValues(target.data?.target) });
  const patch = useMutation(PlatformActions.method.patchTarget, { onSuccess: refresh });
  const rekey = useMutation(PlatformActions.method.patchTarget, { onSuccess: refresh });
  const remove = useMutation(PlatformActions.method.deleteTarget, {
    onSuccess: async () => {
      await refresh();
      await navigate({ to: "/actions/targets", search: (prev) => prev });
    },
  });
  if (target.error) return <ApiError error={target.error} />;
  if (!target.data) return <p role="status">Loading…</p>;
  const name = target.data.target?.target?.name ?? targetId;
  const write = may("action.target.write");
  return (
    <>
      <div className="title">
        <h1>{name}</h1>
      </div>
      <ActionsTabs />
      <ResourceTabs label="Target" tabs={TABS.target(targetId)} />
      <dl className="facts">
        <dt>ID</dt>
        <dd>
          <code>{targetId}</code>
        </dd>
      </dl>
      <div className="actions">
        {write && (
          <ConfirmAction
            trigger="New signing key"
            title="Replace the signing key?"
            confirm="Replace"
            onConfirm={() => rekey.mutateAsync({ id: targetId, target: { regenerateSigningKey: true } })}
          >
            <p>Calls are signed with the new key at once; the endpoint must check them with it from now on.</p>
          </ConfirmAction>
        )}
        {may("action.target.delete") && (
          <ConfirmAction trigger="Delete" title={`Delete ${name}?`} confirm="Delete" onConfirm={() => remove.mutateAsync({ id: targetId })}>
            <p>Executions stop calling it. This cannot be undone.</p>
          </ConfirmAction>
        )}
      </div>
      {rekey.data?.signingKey && <SecretOnce label="New signing key" value={rekey.data.signingKey} />}
      <SettingsForm
        mayWrite={write}
        onSubmit={form.handleSubmit((v) => patch.mutate({ id: targetId, target: targetFields(v) }))}
        pending={patch.isPending}
        error={patch.error}
        saved={patch.isSuccess && !form.formState.isDirty}
      >
        <TargetFields control={form.control} />
      </SettingsForm>
    </>
  );
}
