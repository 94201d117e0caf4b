import { useState, type ReactNode } from "react";
import { useForm, type Control, type DefaultValues, type FieldValues } from "react-hook-form";
import { FormDialog } from "../../components/FormDialog";
import { SecretOnce } from "../../components/SecretOnce";
import type { ProviderFamily } from "./families";
import { useFamilyCall } from "./use-family";

/** A new provider of a family (inactive until activated); an endpoint's signing key shown once. */
export function NewProvider<V extends FieldValues, Create>(props: {
  family: ProviderFamily<Create, unknown>;
  empty: V;
  provider(values: V): Create;
  fields(control: Control<V>): ReactNode;
}) {
  const { family } = props;
  const [open, setOpen] = useState(false);
  const form = useForm<V>({ defaultValues: props.empty as DefaultValues<V> });
  const create = useFamilyCall(family, family.create);
  return (
    <>
      <FormDialog
        label={`New ${family.noun}`}
        primary
        open={open}
        onOpenChange={setOpen}
        onSubmit={form.handleSubmit((v) =>
          create.mutate(props.provider(v), {
            onSuccess: () => {
              setOpen(false);
              form.reset();
            },
          }),
        )}
        submit="Create"
        pending={create.isPending}
        error={create.error}
      >
        {props.fields(form.control)}
      </FormDialog>
      {create.data?.signingKey && <SecretOnce label={`Signing key of the new ${family.noun}`} value={create.data.signingKey} />}
    </>
  );
}
