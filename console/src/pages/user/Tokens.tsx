import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { Button, Cell } from "react-aria-components";
import { useForm } from "react-hook-form";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { ApiError } from "../../components/ApiError";
import { ResultTable } from "../../components/ResultTable";
import { SecretOnce } from "../../components/SecretOnce";
import { TextInput } from "../../components/TextInput";
import { useScope } from "../../scope";
import { useRefreshUsers } from "./refresh";

const DAY_MS = 24 * 3600 * 1000;

/** The personal access tokens of a service account or of a schema user whose schema allows them: the new one shown once. */
export function Tokens({ userId, mayWrite }: { userId: string; mayWrite: boolean }) {
  const { ctx } = useScope();
  const refresh = useRefreshUsers();
  const found = useQuery(PlatformUsers.method.searchPersonalAccessTokens, { id: userId, ctx, query: { limit: 100 } });
  const add = useMutation(PlatformUsers.method.addPersonalAccessToken, { onSuccess: refresh });
  const remove = useMutation(PlatformUsers.method.deletePersonalAccessToken, { onSuccess: refresh });
  const form = useForm<{ days: string }>({ defaultValues: { days: "90" } });
  return (
    <section aria-labelledby="tokens">
      <h2 id="tokens">Personal access tokens</h2>
      <ApiError error={found.error ?? remove.error} />
      <ResultTable
        label="Personal access tokens"
        columns={["Token", "Expires", "Actions"]}
        rows={found.data?.result ?? []}
        rowId={(t) => t.details?.id ?? ""}
        pending={found.isPending}
        empty="No tokens."
        dependencies={[mayWrite]}
      >
        {(t) => (
          <>
            <Cell>
              <code>{t.details?.id}</code>
            </Cell>
            <Cell>{t.expirationDate ? timestampDate(t.expirationDate).toLocaleDateString() : ""}</Cell>
            <Cell>
              {mayWrite && (
                <Button onPress={() => remove.mutate({ id: userId, ctx, patId: t.details?.id ?? "" })} aria-label={`Revoke token ${t.details?.id}`}>
                  Revoke
                </Button>
              )}
            </Cell>
          </>
        )}
      </ResultTable>
      {mayWrite && (
        <form
          className="inline"
          onSubmit={form.handleSubmit((v) =>
            add.mutate({ id: userId, ctx, pat: { expirationDate: timestampFromDate(new Date(Date.now() + Number(v.days) * DAY_MS)) } }),
          )}
        >
          <TextInput
            control={form.control}
            name="days"
            label="Valid for (days)"
            rules={{ required: "Give a number of days.", pattern: { value: /^[1-9]\d{0,4}$/, message: "A whole number of days, 1 or more." } }}
          />
          <Button type="submit" isDisabled={add.isPending}>
            New token
          </Button>
        </form>
      )}
      <ApiError error={add.error} />
      {add.data?.token && <SecretOnce label="New token" value={add.data.token} />}
    </section>
  );
}
