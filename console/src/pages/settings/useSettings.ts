import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import type { DescMethodUnary } from "@bufbuild/protobuf";
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useForm, type FieldValues, type Path } from "react-hook-form";
import { usePermissions } from "../../api/permissions";
import { useScope } from "../../scope";
import { changedSettings, formValues, settingReset, type ResolvedSetting, type Settings } from "./settings-form";

/** One setting's line on a page (SettingField). */
export interface SettingLine {
  label: string;
  owner: ResolvedSetting["owner"];
  /** False where the console's context cannot set it (an organization, for an instance's setting). */
  editable: boolean;
  mayReset: boolean;
  pending: boolean;
  resetError: unknown;
  onReset(): void;
}

/**
 * A settings page's data: the settings resolved in the console's context, a form of them,
 * saving those whose value differs from the one in effect, and resetting one. `permission`:
 * what the Set call needs (its option in the proto). `enabled`: false where the context has
 * no such settings. `selects`: what else both calls name besides the context (a message
 * text's kind and language).
 */
export function useSettings<
  Values extends FieldValues,
  ResolveIn extends DescMessage,
  ResolveOut extends DescMessage,
  SetIn extends DescMessage,
  SetOut extends DescMessage,
>(opts: {
  resolve: DescMethodUnary<ResolveIn, ResolveOut>;
  set: DescMethodUnary<SetIn, SetOut>;
  settings: Settings<Values>;
  permission: string;
  enabled?: boolean;
  selects?: object;
}) {
  const { resolve, set, settings, permission, enabled = true, selects } = opts;
  const { ctx, orgId } = useScope();
  const { may } = usePermissions();
  const queries = useQueryClient();
  const answer = useQuery(resolve, { ...selects, ctx } as unknown as MessageInitShape<ResolveIn>, { enabled });
  const resolved = (answer.data as { settings?: Record<string, ResolvedSetting | undefined> } | undefined)?.settings;
  // A refetch (after a Reset or a save) brings the values in effect into the fields not being edited.
  const form = useForm<Values>({ values: resolved && formValues(settings, resolved), resetOptions: { keepDirtyValues: true } });
  // Read while rendering: react-hook-form keeps only the form state that is read.
  const { isDirty } = form.formState;
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: resolve.parent, cardinality: undefined }) });
  const save = useMutation(set, {
    // What was saved is the form's own from now on (not dirty); the refetch then brings it as the API keeps it.
    onSuccess: () => {
      form.reset(form.getValues());
      return refresh();
    },
  });
  const reset = useMutation(set, { onSuccess: refresh });
  const [resetting, setResetting] = useState<keyof Values>();
  const request = (change: Record<string, object>) => ({ ...selects, ctx, settings: change }) as unknown as MessageInitShape<SetIn>;
  const mayWrite = may(permission);
  return {
    answer,
    // react-hook-form takes new `values` after the render that brought them: until then the
    // form is empty, and its inputs have nothing to show.
    loading: !resolved || Object.keys(form.getValues()).length === 0,
    form,
    mayWrite,
    onSubmit: form.handleSubmit((values) => save.mutate(request(changedSettings(settings, values, resolved ?? {})))),
    save: { pending: save.isPending, error: save.error, saved: save.isSuccess && !isDirty },
    /** The Set call's answer (branding's contrast warnings). */
    saved: save.data,
    refresh,
    /** What a setting's line shows: where its value comes from, and whether it may be changed here. */
    setting(name: keyof Values & string): SettingLine {
      const editable = !orgId || settings[name].inOrgs;
      return {
        label: settings[name].label,
        owner: resolved?.[name]?.owner,
        editable,
        mayReset: mayWrite && editable,
        pending: reset.isPending,
        resetError: resetting === name ? reset.error : null,
        onReset() {
          setResetting(name);
          form.resetField(name as Path<Values>);
          reset.mutate(request(settingReset(settings, name)));
        },
      };
    },
  };
}
