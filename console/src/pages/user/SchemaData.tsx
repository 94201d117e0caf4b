import type { JsonObject } from "@bufbuild/protobuf";
import { useMutation } from "@connectrpc/connect-query";
import { useForm, type Control, type Path } from "react-hook-form";
import type { GetSchemaUser } from "../../../../gen/platform/resources/user/v3alpha/user_pb";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { SettingsForm } from "../../components/SettingsForm";
import { TextLinesInput } from "../../components/TextLinesInput";
import { useScope } from "../../scope";
import { jsonObject } from "../user-schema/form";
import { mergePatch } from "./merge-patch";
import { useRefreshUsers } from "./refresh";

/**
 * A schema user's data as the reader may see it (the schema's read permissions), edited as one
 * JSON object. What is sent is the merge patch from the data shown to the data typed, so a
 * field the reader was not shown is never touched; the schema and its write permissions are
 * the server's to check, and its refusal shows under the form.
 */
export function SchemaData({ userId, schema, mayWrite }: { userId: string; schema: GetSchemaUser; mayWrite: boolean }) {
  const { ctx } = useScope();
  const refresh = useRefreshUsers();
  const shown = schema.data ?? {};
  const form = useForm<{ data: string }>({ values: { data: JSON.stringify(shown, null, 2) } });
  const patch = useMutation(PlatformUsers.method.patchUser, { onSuccess: refresh });
  return (
    <SettingsForm
      title="Data"
      mayWrite={mayWrite}
      onSubmit={form.handleSubmit((v) => patch.mutate({ id: userId, ctx, user: { schema: { data: mergePatch(shown, JSON.parse(v.data) as JsonObject) } } }))}
      pending={patch.isPending}
      error={patch.error}
      saved={patch.isSuccess && !form.formState.isDirty}
    >
      <DataInput control={form.control} description="The fields you may read; a field left out is removed." />
    </SettingsForm>
  );
}

/** A schema user's data as text, refused in the form unless it is a JSON object; whether it meets the schema the server says. */
export function DataInput<T extends { data: string }>({ control, description }: { control: Control<T>; description: string }) {
  return (
    <TextLinesInput
      control={control}
      // A path of every T that has `data`, which TypeScript cannot see through the generic.
      name={"data" as Path<T>}
      label="Data (JSON)"
      description={description}
      rows={10}
      rules={{ required: "Give the data.", validate: (v) => jsonObject(String(v), "The data") }}
    />
  );
}
