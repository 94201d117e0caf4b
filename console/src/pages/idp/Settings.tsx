import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useForm } from "react-hook-form";
import type { IDP } from "../../../../gen/platform/resources/idp/v3alpha/idp_pb";
import { ApiError } from "../../components/ApiError";
import { SettingsForm } from "../../components/SettingsForm";
import { useScope } from "../../scope";
import { IdpFields } from "./IdpFields";
import { idpValues, patchRequest, type Config, type IdpValues } from "./form";
import { KINDS, type KindName } from "./kinds";

/** What every Get<Type>IDP answers: the provider with its type's configuration. */
interface TypedAnswer {
  idp?: { idp?: { idp?: IDP; config?: Config } };
}

/** A provider's settings by its type's Get and Patch; `mayWrite` only where it is defined (below, they are read-only). */
export function IdpSettings({ idpId, kind, mayWrite, onSaved }: { idpId: string; kind: KindName; mayWrite: boolean; onSaved(): Promise<void> }) {
  const { ctx } = useScope();
  const got = useQuery(KINDS[kind].get, { id: idpId, ctx });
  const answer = got.data as TypedAnswer | undefined;
  const saved = idpValues(kind, answer?.idp?.idp?.idp, answer?.idp?.idp?.config);
  const form = useForm<IdpValues>({ values: saved });
  const patch = useMutation(KINDS[kind].patch, { onSuccess: onSaved });
  if (got.error) return <ApiError error={got.error} />;
  if (!answer) return <p role="status">Loading…</p>;
  // The secret typed (client secret, bind password) goes once saved: the field shows nothing stored.
  const submit = (v: IdpValues) =>
    patch.mutate({ id: idpId, ctx, idp: patchRequest(v) }, { onSuccess: () => form.reset({ ...v, clientSecret: "", ldap: { ...v.ldap, bindPassword: "" } }) });
  return (
    <SettingsForm
      mayWrite={mayWrite}
      onSubmit={form.handleSubmit(submit)}
      pending={patch.isPending}
      error={patch.error}
      saved={patch.isSuccess && !form.formState.isDirty}
    >
      <IdpFields control={form.control} kind={kind} saved={saved} />
    </SettingsForm>
  );
}
