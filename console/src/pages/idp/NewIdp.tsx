import { createConnectQueryKey, useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { useForm } from "react-hook-form";
import type { Details } from "../../../../gen/platform/resources/object/v3alpha/object_pb";
import { PlatformIdentityProviders } from "../../../../gen/platform/resources/idp/v3alpha/idp_service_pb";
import { RadioInput } from "../../components/ChoiceInputs";
import { FormDialog } from "../../components/FormDialog";
import { useScope } from "../../scope";
import { CallbackUrl } from "./CallbackUrl";
import { IdpFields } from "./IdpFields";
import { NEW_IDP, createRequest, type IdpValues } from "./form";
import { KINDS, KIND_NAMES } from "./kinds";

const TYPES = KIND_NAMES.map((name) => ({ value: name, label: KINDS[name].choice }));

/** A new provider of a chosen type, defined in the context the console acts in; its page follows. */
export function NewIdp() {
  const [open, setOpen] = useState(false);
  const { ctx, orgId } = useScope();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const form = useForm<IdpValues>({ defaultValues: NEW_IDP });
  const kind = form.watch("kind");
  const create = useMutation(KINDS[kind].create, {
    onSuccess: async (answer) => {
      await queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformIdentityProviders, cardinality: undefined }) });
      setOpen(false);
      form.reset();
      // Every type's Create answers the same Details.
      const idpId = (answer as { details?: Details }).details?.id ?? "";
      await navigate({ to: "/identity-providers/$idpId", params: { idpId }, search: (prev) => prev });
    },
  });
  return (
    <FormDialog
      label="New identity provider"
      primary
      open={open}
      onOpenChange={setOpen}
      onSubmit={form.handleSubmit((v) => create.mutate({ idp: createRequest(v), ctx }))}
      submit="Create"
      pending={create.isPending}
      error={create.error}
    >
      <RadioInput
        control={form.control}
        name="kind"
        label="Type"
        description={
          orgId
            ? "Defined in the organization chosen above: only its people can use it."
            : "Defined in the instance: every organization inherits it and may switch it off for itself."
        }
        options={TYPES}
      />
      {KINDS[kind].protocol === "oauth" && (
        <dl className="facts">
          <CallbackUrl />
        </dl>
      )}
      {KINDS[kind].protocol === "saml" && (
        <p className="hint">
          Once created, its page shows this service's SP metadata URL (also its entity ID) and ACS URL, to register at the identity provider.
        </p>
      )}
      <IdpFields control={form.control} kind={kind} />
    </FormDialog>
  );
}
