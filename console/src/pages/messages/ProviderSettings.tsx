import type { ReactNode } from "react";
import { useForm, type Control, type FieldValues } from "react-hook-form";
import { usePermissions } from "../../api/permissions";
import { SecretOnce } from "../../components/SecretOnce";
import { SettingsForm } from "../../components/SettingsForm";
import { WRITE, type ProviderFamily } from "./families";
import { useFamilyCall } from "./use-family";

/** A provider's settings, saved as a patch of what changed; a signing key the patch made (a new URL, a new endpoint) shown once. */
export function ProviderSettings<V extends FieldValues, Patch>(props: {
  family: ProviderFamily<unknown, Patch>;
  id: string;
  saved: V;
  patch(saved: V, values: V): Patch;
  fields(control: Control<V>): ReactNode;
}) {
  const { family, id, saved } = props;
  const { may } = usePermissions();
  const form = useForm<V>({ values: saved });
  const patch = useFamilyCall(family, family.patch);
  return (
    <>
      <SettingsForm
        mayWrite={may(WRITE)}
        onSubmit={form.handleSubmit((v) => patch.mutate({ id, provider: props.patch(saved, v) }))}
        pending={patch.isPending}
        error={patch.error}
        saved={patch.isSuccess && !form.formState.isDirty}
      >
        {props.fields(form.control)}
      </SettingsForm>
      {patch.data?.signingKey && <SecretOnce label="Signing key of the endpoint" value={patch.data.signingKey} />}
    </>
  );
}
