import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { Button, Cell } from "react-aria-components";
import { useForm, type RegisterOptions } from "react-hook-form";
import type { Metadata as Entry } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { ApiError } from "../../components/ApiError";
import { FormDialog } from "../../components/FormDialog";
import { Pager } from "../../components/Pager";
import { RemoveButton } from "../../components/RemoveButton";
import { ResultTable } from "../../components/ResultTable";
import { TextInput } from "../../components/TextInput";
import { useScope } from "../../scope";
import { describeValue, encode, MAX_VALUE_BYTES, textOf } from "./metadata-value";
import { useRefreshUsers } from "./refresh";

const LIMIT = 20;

interface Values {
  key: string;
  value: string;
}

// The proto's limits: a key of 1 to 200 characters, a value of 1 to 65,536 bytes.
const KEY_RULES: RegisterOptions<Values, "key"> = {
  validate: (key) => (key.trim() === "" ? "Give a key." : key.trim().length > 200 ? "A key has at most 200 characters." : true),
};
const VALUE_RULES: RegisterOptions<Values, "value"> = {
  validate: (value) =>
    value === ""
      ? "Give a value."
      : encode(value).length > MAX_VALUE_BYTES
        ? `A value has at most ${MAX_VALUE_BYTES.toLocaleString()} bytes (as UTF-8).`
        : true,
};

/** Keys and values kept with the user (for actions and applications): listed by key, set, changed and removed. */
export function Metadata({ userId, mayWrite }: { userId: string; mayWrite: boolean }) {
  const { ctx } = useScope();
  const refresh = useRefreshUsers();
  const [offset, setOffset] = useState(0);
  const found = useQuery(PlatformUsers.method.searchMetadata, { id: userId, ctx, query: { offset: BigInt(offset), limit: LIMIT, asc: true } });
  const set = useMutation(PlatformUsers.method.setMetadata, { onSuccess: refresh });
  const remove = useMutation(PlatformUsers.method.deleteMetadata, { onSuccess: refresh });
  const form = useForm<Values>({ defaultValues: { key: "", value: "" } });
  const rows = found.data?.result ?? [];
  const add = (v: Values) => set.mutate({ id: userId, ctx, metadata: [{ key: v.key.trim(), value: encode(v.value) }] }, { onSuccess: () => form.reset() });
  return (
    <section aria-labelledby="metadata">
      <h2 id="metadata">Metadata</h2>
      <ApiError error={found.error ?? remove.error} />
      <ResultTable
        label="Metadata"
        columns={["Key", "Value", "Actions"]}
        rows={rows}
        rowId={(m) => m.key}
        pending={found.isPending}
        empty="No metadata."
        dependencies={[mayWrite, remove.isPending]}
      >
        {(m) => (
          <>
            <Cell>{m.key}</Cell>
            <Cell>
              <code>{describeValue(m.value)}</code>
            </Cell>
            <Cell>
              {mayWrite && (
                <div className="row-actions">
                  <ChangeValue userId={userId} entry={m} />
                  <RemoveButton what={`the key ${m.key}`} pending={remove.isPending} onPress={() => remove.mutate({ id: userId, ctx, key: m.key })} />
                </div>
              )}
            </Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
      {mayWrite && (
        <form className="inline" aria-label="Set a key" onSubmit={form.handleSubmit(add)}>
          <h3>Set a key</h3>
          <TextInput control={form.control} name="key" label="Key" description="A key the user has already gets the new value." rules={KEY_RULES} />
          <TextInput control={form.control} name="value" label="Value" description="Text, kept as UTF-8." rules={VALUE_RULES} />
          <Button type="submit" isDisabled={set.isPending}>
            Set key
          </Button>
          <ApiError error={set.error} />
        </form>
      )}
    </section>
  );
}

/** A new value for one key; a binary value is replaced by text. */
function ChangeValue({ userId, entry }: { userId: string; entry: Entry }) {
  const { ctx } = useScope();
  const refresh = useRefreshUsers();
  const [open, setOpen] = useState(false);
  const text = textOf(entry.value);
  const form = useForm<Values>({ values: { key: entry.key, value: text ?? "" } });
  const set = useMutation(PlatformUsers.method.setMetadata, {
    onSuccess: async () => {
      await refresh();
      setOpen(false);
    },
  });
  return (
    <FormDialog
      label="Change…"
      title={`Change ${entry.key}`}
      open={open}
      onOpenChange={setOpen}
      onSubmit={form.handleSubmit((v) => set.mutate({ id: userId, ctx, metadata: [{ key: entry.key, value: encode(v.value) }] }))}
      submit="Save"
      pending={set.isPending}
      error={set.error}
    >
      <TextInput
        control={form.control}
        name="value"
        label="Value"
        description={text === undefined ? `Now binary (${entry.value.length.toLocaleString()} bytes): text replaces it.` : "Text, kept as UTF-8."}
        rules={VALUE_RULES}
        autoFocus
      />
    </FormDialog>
  );
}
