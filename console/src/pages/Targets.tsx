import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Cell } from "react-aria-components";
import { useForm } from "react-hook-form";
import { PlatformActions } from "../../../gen/platform/resources/action/v3alpha/action_service_pb";
import { TargetFieldName } from "../../../gen/platform/resources/action/v3alpha/target_pb";
import { TextFilterMethod } from "../../../gen/platform/resources/object/v3alpha/object_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { FormDialog } from "../components/FormDialog";
import { Pager } from "../components/Pager";
import { ResultTable } from "../components/ResultTable";
import { SearchBox } from "../components/SearchBox";
import { SecretOnce } from "../components/SecretOnce";
import { ActionsTabs } from "./actions/ActionsTabs";
import { TargetFields } from "./actions/TargetFields";
import { EMPTY_TARGET, targetFields, targetValues, type TargetValues } from "./actions/target-form";

const LIMIT = 20;

/** The endpoints actions call: found by name on the server, a page at a time; creating one (its signing key shown once). */
export function Targets() {
  const { may } = usePermissions();
  const [name, setName] = useState("");
  const [offset, setOffset] = useState(0);
  const filters = name ? [{ filter: { case: "name" as const, value: { name, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [];
  const found = useQuery(PlatformActions.method.searchTargets, {
    filters,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: TargetFieldName.NAME,
  });
  const rows = found.data?.result ?? [];
  return (
    <>
      <div className="title">
        <h1>Actions</h1>
        {may("action.target.write") && <CreateTarget />}
      </div>
      <ActionsTabs />
      <SearchBox
        label="Find targets by name"
        value={name}
        onChange={(value) => {
          setName(value);
          setOffset(0);
        }}
      />
      <ApiError error={found.error} />
      <ResultTable
        label="Targets"
        columns={["Name", "URL", "Timeout", "When"]}
        rows={rows}
        rowId={(t) => t.details?.id ?? ""}
        pending={found.isPending}
        empty="No targets yet."
      >
        {(t) => {
          const v = targetValues(t);
          return (
            <>
              <Cell>
                <Link to="/actions/targets/$targetId" params={{ targetId: t.details?.id ?? "" }} search={(prev) => prev}>
                  {v.name}
                </Link>
              </Cell>
              <Cell>
                <code>{v.url}</code>
              </Cell>
              <Cell>{v.timeoutSeconds} s</Cell>
              <Cell>{v.mode === "async" ? "Not waited for" : v.mode === "interrupt" ? "Waited for; fails the call" : "Waited for"}</Cell>
            </>
          );
        }}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </>
  );
}

function CreateTarget() {
  const [open, setOpen] = useState(false);
  const queries = useQueryClient();
  const form = useForm<TargetValues>({ defaultValues: EMPTY_TARGET });
  const create = useMutation(PlatformActions.method.createTarget, {
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformActions, cardinality: undefined }) });
      setOpen(false);
      form.reset();
    },
  });
  return (
    <>
      <FormDialog
        label="New target"
        primary
        open={open}
        onOpenChange={setOpen}
        onSubmit={form.handleSubmit((v) => create.mutate({ target: targetFields(v) }))}
        submit="Create"
        pending={create.isPending}
        error={create.error}
      >
        <TargetFields control={form.control} autoFocus />
      </FormDialog>
      {create.data?.signingKey && <SecretOnce label="Signing key of the new target" value={create.data.signingKey} />}
    </>
  );
}
