import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Cell } from "react-aria-components";
import { useForm } from "react-hook-form";
import { TextFilterMethod } from "../../../gen/platform/resources/object/v3alpha/object_pb";
import { UserSchemaFieldName, UserSchemaState } from "../../../gen/platform/resources/user_schema/v3alpha/user_schema_pb";
import { PlatformUserSchemas } from "../../../gen/platform/resources/user_schema/v3alpha/user_schema_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { FormDialog } from "../components/FormDialog";
import { Pager } from "../components/Pager";
import { ResultTable } from "../components/ResultTable";
import { SearchBox } from "../components/SearchBox";
import { SchemaFields } from "./user-schema/SchemaFields";
import { EMPTY_SCHEMA, schemaFields, type SchemaValues } from "./user-schema/form";

const LIMIT = 20;

/** The instance's user schemas: found by type on the server, a page at a time; creating one. */
export function UserSchemas() {
  const { may } = usePermissions();
  const [type, setType] = useState("");
  const [offset, setOffset] = useState(0);
  const filters = type ? [{ filter: { case: "type" as const, value: { value: type, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [];
  const found = useQuery(PlatformUserSchemas.method.searchUserSchemas, {
    filters,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: UserSchemaFieldName.TYPE,
  });
  const rows = found.data?.result ?? [];
  return (
    <>
      <div className="title">
        <h1>User schemas</h1>
        {may("user.schema.write") && <CreateUserSchema />}
      </div>
      <SearchBox
        label="Find schemas by type"
        value={type}
        onChange={(value) => {
          setType(value);
          setOffset(0);
        }}
      />
      <ApiError error={found.error} />
      <ResultTable
        label="User schemas"
        columns={["Type", "State", "Revision", "Changed"]}
        rows={rows}
        rowId={(s) => s.details?.id ?? ""}
        pending={found.isPending}
        empty="No user schemas yet."
      >
        {(s) => (
          <>
            <Cell>
              <Link to="/user-schemas/$schemaId" params={{ schemaId: s.details?.id ?? "" }} search={(prev) => prev}>
                {s.type}
              </Link>
            </Cell>
            <Cell>{s.state === UserSchemaState.ACTIVE ? "Active" : "Inactive"}</Cell>
            <Cell>{s.revision}</Cell>
            <Cell>{s.details?.changeDate ? timestampDate(s.details.changeDate).toLocaleString() : ""}</Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </>
  );
}

function CreateUserSchema() {
  const [open, setOpen] = useState(false);
  const queries = useQueryClient();
  const form = useForm<SchemaValues>({ defaultValues: EMPTY_SCHEMA });
  const create = useMutation(PlatformUserSchemas.method.createUserSchema, {
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformUserSchemas, cardinality: undefined }) });
      setOpen(false);
      form.reset();
    },
  });
  return (
    <FormDialog
      label="New user schema"
      primary
      open={open}
      onOpenChange={setOpen}
      onSubmit={form.handleSubmit((v) => create.mutate({ userSchema: schemaFields(v) }))}
      submit="Create"
      pending={create.isPending}
      error={create.error}
    >
      <SchemaFields control={form.control} autoFocus />
    </FormDialog>
  );
}
