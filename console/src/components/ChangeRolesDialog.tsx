import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { CheckboxesInput, type Option } from "./ChoiceInputs";
import { FormDialog } from "./FormDialog";

/**
 * Replacing the roles of a membership or of a user grant (the same dialog for both): the
 * current ones ticked, saved by `onSave`, which the dialog closes after; `onOpenChange`
 * tells the caller when to fetch the options.
 */
export function ChangeRolesDialog(props: {
  title: string;
  current: string[];
  options: Option[];
  error?: unknown;
  onOpenChange?(open: boolean): void;
  onSave(roles: string[]): Promise<unknown>;
}) {
  const { title, current, options, error, onOpenChange, onSave } = props;
  const [open, setOpen] = useState(false);
  const form = useForm<{ roles: string[] }>({ values: { roles: current } });
  const save = useMutation({ mutationFn: onSave, onSuccess: () => setOpen(false) });
  return (
    <FormDialog
      label="Change roles"
      title={title}
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        onOpenChange?.(next);
      }}
      onSubmit={form.handleSubmit((v) => save.mutate(v.roles))}
      submit="Save"
      pending={save.isPending}
      error={error ?? save.error}
    >
      <CheckboxesInput control={form.control} name="roles" label="Roles" options={options} />
    </FormDialog>
  );
}
