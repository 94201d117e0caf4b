import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate, useParams } from "@tanstack/react-router";
import { Button } from "react-aria-components";
import { useForm } from "react-hook-form";
import { InstanceState, type GetInstance } from "../../../gen/platform/resources/instance/v3alpha/instance_pb";
import { PlatformInstances } from "../../../gen/platform/resources/instance/v3alpha/instance_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { ConfirmAction } from "../components/ConfirmAction";
import { FormFooter } from "../components/FormFooter";
import { SettingsForm } from "../components/SettingsForm";
import { TextInput } from "../components/TextInput";
import { Domains } from "./instance/Domains";
import { instanceStateLabel } from "./Instances";

const DAY_S = 24 * 3600;

/** Every answer about instances is refetched after any change to one. */
function useRefreshInstances() {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformInstances, cardinality: undefined }) });
}

/**
 * One instance, as a system member manages it: its name, its domains, blocking it (every
 * call to it refused but the system's), how long its audit events stay listed, deleting it.
 */
export function Instance() {
  const { instanceId } = useParams({ from: "/instances/$instanceId" });
  const { may } = usePermissions();
  const navigate = useNavigate();
  const refresh = useRefreshInstances();
  const found = useQuery(PlatformInstances.method.getInstance, { id: instanceId });
  const limit = useMutation(PlatformInstances.method.limit, { onSuccess: refresh });
  const remove = useMutation(PlatformInstances.method.deleteInstance);
  const i = found.data?.instance;
  if (found.error) return <ApiError error={found.error} />;
  if (!i) return <p role="status">Loading…</p>;
  const blocked = i.state === InstanceState.BLOCKED;
  const mayLimit = may("system.instance.write");
  return (
    <>
      <div className="title">
        <h1>{i.name}</h1>
        <span className={blocked ? "badge off" : "badge ok"}>{instanceStateLabel(i.state)}</span>
      </div>
      <dl className="facts">
        <dt>ID</dt>
        <dd>
          <code>{instanceId}</code>
        </dd>
        <dt>Default organization</dt>
        <dd>
          <code>{i.defaultOrgId}</code>
        </dd>
        <dt>Default language</dt>
        <dd>{i.defaultLanguage}</dd>
        <dt>Audit events listed</dt>
        <dd>{i.auditLogRetention ? `For ${retentionDays(i)} days` : "Without limit"}</dd>
      </dl>
      <div className="actions">
        {mayLimit && (
          <Button onPress={() => limit.mutate({ id: instanceId, limits: { block: !blocked } })} isDisabled={limit.isPending}>
            {blocked ? "Unblock" : "Block"}
          </Button>
        )}
        {may("system.instance.delete") && (
          <ConfirmAction
            trigger="Delete…"
            title={`Delete ${i.name}?`}
            confirm="Delete the instance"
            onConfirm={async () => {
              await remove.mutateAsync({ id: instanceId });
              // Away first: refreshed here, the page would fetch the instance it just deleted.
              await navigate({ to: "/instances", search: (prev) => prev });
              await refresh();
            }}
          >
            <p>Its organizations, users, applications and settings become unreachable at once, on every one of its domains. Its events stay.</p>
          </ConfirmAction>
        )}
      </div>
      <ApiError error={limit.error} />
      <Settings instance={i} mayWrite={may("instance.write")} onSaved={refresh} />
      <Domains instance={i} mayWrite={mayLimit} onChanged={refresh} />
      {mayLimit && <AuditRetention instance={i} onSaved={refresh} />}
    </>
  );
}

const retentionDays = (i: GetInstance) => String(Number(i.auditLogRetention?.seconds ?? 0n) / DAY_S);

function Settings({ instance, mayWrite, onSaved }: { instance: GetInstance; mayWrite: boolean; onSaved(): Promise<void> }) {
  const id = instance.details?.id ?? "";
  const form = useForm<{ name: string }>({ values: { name: instance.name } });
  const patch = useMutation(PlatformInstances.method.patchInstance, { onSuccess: onSaved });
  return (
    <SettingsForm
      mayWrite={mayWrite}
      onSubmit={form.handleSubmit((v) => patch.mutate({ id, instance: { name: v.name.trim() } }))}
      pending={patch.isPending}
      error={patch.error}
      saved={patch.isSuccess && !form.formState.isDirty}
    >
      <TextInput
        control={form.control}
        name="name"
        label="Name"
        rules={{ required: "Give the instance a name.", maxLength: { value: 200, message: "At most 200 characters." } }}
      />
    </SettingsForm>
  );
}

/** The audit log's retention, one of the instance's limits; empty lifts it. */
function AuditRetention({ instance, onSaved }: { instance: GetInstance; onSaved(): Promise<void> }) {
  const id = instance.details?.id ?? "";
  const form = useForm<{ days: string }>({ values: { days: instance.auditLogRetention ? retentionDays(instance) : "" } });
  const limit = useMutation(PlatformInstances.method.limit, { onSuccess: onSaved });
  const save = (v: { days: string }) => limit.mutate({ id, limits: { auditLogRetention: { seconds: BigInt(Number(v.days || "0") * DAY_S) } } });
  return (
    <section aria-labelledby="limits">
      <h2 id="limits">Limits</h2>
      <form onSubmit={form.handleSubmit(save)}>
        <TextInput
          control={form.control}
          name="days"
          label="Keep audit events listed for (days)"
          description="Empty: without limit."
          rules={{
            pattern: { value: /^([1-9]\d{0,3})?$/, message: "A whole number of days, or nothing." },
            validate: (v) => Number(v || "0") <= 3652 || "At most 3652 days (ten years).",
          }}
        />
        <FormFooter submit="Save limits" pending={limit.isPending} error={limit.error} saved={limit.isSuccess && !form.formState.isDirty} />
      </form>
    </section>
  );
}
