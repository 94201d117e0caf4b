import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { Cell, Column, Row, Table, TableBody, TableHeader } from "react-aria-components";
import { useForm } from "react-hook-form";
import { TextFilterMethod } from "../../../gen/platform/resources/object/v3alpha/object_pb";
import { OrganizationFieldName, OrganizationState } from "../../../gen/platform/resources/org/v3alpha/organization_pb";
import { PlatformOrganizations } from "../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { FormDialog } from "../components/FormDialog";
import { Pager } from "../components/Pager";
import { SearchBox } from "../components/SearchBox";
import { TextInput } from "../components/TextInput";

const LIMIT = 20;

/** The instance's organizations: found by name on the server, a page at a time; creating one. */
export function Organizations() {
  const { may } = usePermissions();
  const [name, setName] = useState("");
  const [offset, setOffset] = useState(0);
  const filters = name ? [{ filter: { case: "name" as const, value: { name, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [];
  const found = useQuery(PlatformOrganizations.method.searchOrganizations, {
    filters,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: OrganizationFieldName.NAME,
  });
  const rows = found.data?.result ?? [];
  return (
    <>
      <div className="title">
        <h1>Organizations</h1>
        {may("org.write") && <CreateOrganization />}
      </div>
      <SearchBox
        label="Find by name"
        value={name}
        onChange={(value) => {
          setName(value);
          setOffset(0);
        }}
      />
      <ApiError error={found.error} />
      <Table aria-label="Organizations">
        <TableHeader>
          <Column isRowHeader>Name</Column>
          <Column>Primary domain</Column>
          <Column>State</Column>
        </TableHeader>
        <TableBody items={rows} renderEmptyState={() => (found.isPending ? "Loading…" : "No organization matches.")}>
          {(o) => (
            <Row id={o.details?.id ?? ""}>
              <Cell>
                <Link to="/organizations/$orgId" params={{ orgId: o.details?.id ?? "" }} search={(prev) => prev}>
                  {o.name}
                </Link>
                {o.isDefault && <span className="badge">Default</span>}
              </Cell>
              <Cell>{o.primaryDomain}</Cell>
              <Cell>{o.state === OrganizationState.ACTIVE ? "Active" : "Inactive"}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </>
  );
}

function CreateOrganization() {
  const [open, setOpen] = useState(false);
  const navigate = useNavigate();
  const queries = useQueryClient();
  const form = useForm<{ name: string }>({ defaultValues: { name: "" } });
  const create = useMutation(PlatformOrganizations.method.createOrganization, {
    onSuccess: async (answer) => {
      await queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformOrganizations, cardinality: undefined }) });
      setOpen(false);
      form.reset();
      await navigate({ to: "/organizations/$orgId", params: { orgId: answer.details?.id ?? "" }, search: (prev) => prev });
    },
  });
  return (
    <FormDialog
      label="New organization"
      primary
      open={open}
      onOpenChange={setOpen}
      onSubmit={form.handleSubmit((values) => create.mutate({ organization: { name: values.name.trim() } }))}
      submit="Create"
      pending={create.isPending}
      error={create.error}
    >
      <TextInput
        control={form.control}
        name="name"
        label="Name"
        rules={{ required: "Give the organization a name.", maxLength: { value: 200, message: "At most 200 characters." } }}
        autoFocus
      />
    </FormDialog>
  );
}
