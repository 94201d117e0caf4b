import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useForm } from "react-hook-form";
import type { GetInstance, PasswordPolicy } from "../../../../gen/platform/resources/instance/v3alpha/instance_pb";
import { PlatformInstances } from "../../../../gen/platform/resources/instance/v3alpha/instance_service_pb";
import { TextFilterMethod } from "../../../../gen/platform/resources/object/v3alpha/object_pb";
import { usePermissions } from "../../api/permissions";
import { ApiError } from "../../components/ApiError";
import { CheckboxInput } from "../../components/ChoiceInputs";
import { SettingsForm } from "../../components/SettingsForm";
import { TextInput } from "../../components/TextInput";
import { useScope } from "../../scope";
import { InstanceWide } from "./InstanceWide";

interface RulesValues {
  minLength: string;
  requireUppercase: boolean;
  requireLowercase: boolean;
  requireNumber: boolean;
  requireSymbol: boolean;
}

/** The API always names the instance's policy; its message type still lets it be absent. */
const rulesValues = (p: PasswordPolicy | undefined): RulesValues => ({
  minLength: p ? String(p.minLength) : "",
  requireUppercase: p?.requireUppercase === true,
  requireLowercase: p?.requireLowercase === true,
  requireNumber: p?.requireNumber === true,
  requireSymbol: p?.requireSymbol === true,
});

/**
 * The instance's rules for new passwords: a property of the instance (PatchInstance), not a
 * setting inherited by organizations, so shown in the instance's context only.
 */
export function PasswordRules() {
  const { orgId } = useScope();
  const { may } = usePermissions();
  if (orgId) return <InstanceWide what="Password rules" to="/settings/security" />;
  return may("instance.read") ? <OwnInstanceRules /> : null;
}

/**
 * The API names no "my instance": SearchInstances answers an instance's administrators
 * their own instance only, and a system member all of them, so it is asked for the one
 * whose domain the console is served on, which is the instance the console acts in.
 */
function OwnInstanceRules() {
  const found = useQuery(PlatformInstances.method.searchInstances, {
    query: { limit: 1 },
    filters: [{ filter: { case: "domain", value: { value: window.location.hostname, method: TextFilterMethod.EQUALS_IGNORE_CASE } } }],
  });
  const instance = found.data?.result[0];
  if (found.error) return <ApiError error={found.error} />;
  if (!found.data) return <p role="status">Loading…</p>;
  if (!instance) return <ApiError error={new Error(`No instance answers to ${window.location.hostname}.`)} />;
  return <RulesForm instance={instance} />;
}

function RulesForm({ instance }: { instance: GetInstance }) {
  const { may } = usePermissions();
  const queries = useQueryClient();
  const form = useForm<RulesValues>({ values: rulesValues(instance.passwordPolicy) });
  const patch = useMutation(PlatformInstances.method.patchInstance, {
    onSuccess: () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformInstances, cardinality: undefined }) }),
  });
  // The policy is replaced as a whole (PatchInstance), so all of it is sent.
  const save = (v: RulesValues) =>
    patch.mutate({ id: instance.details?.id ?? "", instance: { passwordPolicy: { ...v, minLength: Number(v.minLength.trim()) } } });
  const { control } = form;
  return (
    <SettingsForm
      title="Password rules"
      mayWrite={may("instance.write")}
      onSubmit={form.handleSubmit(save)}
      pending={patch.isPending}
      error={patch.error}
      saved={patch.isSuccess && !form.formState.isDirty}
    >
      <p className="hint">Every new password in the instance must meet them; passwords set earlier stay valid.</p>
      <TextInput
        control={control}
        name="minLength"
        label="Minimum length (characters)"
        rules={{
          pattern: { value: /^\s*\d{1,3}\s*$/, message: "A whole number from 1 to 256." },
          validate: (v) => (Number(v) >= 1 && Number(v) <= 256) || "A whole number from 1 to 256.",
        }}
      />
      <CheckboxInput control={control} name="requireUppercase" label="An uppercase letter" />
      <CheckboxInput control={control} name="requireLowercase" label="A lowercase letter" />
      <CheckboxInput control={control} name="requireNumber" label="A digit" />
      <CheckboxInput control={control} name="requireSymbol" label="A character that is neither a letter nor a digit" />
    </SettingsForm>
  );
}
