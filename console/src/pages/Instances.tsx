import { useQuery } from "@connectrpc/connect-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Cell } from "react-aria-components";
import { InstanceFieldName, InstanceState } from "../../../gen/platform/resources/instance/v3alpha/instance_pb";
import { PlatformInstances } from "../../../gen/platform/resources/instance/v3alpha/instance_service_pb";
import { TextFilterMethod } from "../../../gen/platform/resources/object/v3alpha/object_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { Pager } from "../components/Pager";
import { ResultTable } from "../components/ResultTable";
import { SearchBox } from "../components/SearchBox";
import { SelectField } from "../components/SelectField";
import { NewInstance } from "./instance/NewInstance";

const LIMIT = 20;

const FIELDS = [
  { key: "name", label: "Name" },
  { key: "domain", label: "Domain" },
] as const;

export const instanceStateLabel = (state: InstanceState) => (state === InstanceState.BLOCKED ? "Blocked" : "Active");

/** Every instance of the service (a system member's view): found by name or domain on the server, a page at a time; creating one. */
export function Instances() {
  const { may } = usePermissions();
  const [text, setText] = useState("");
  const [field, setField] = useState<(typeof FIELDS)[number]["key"]>("name");
  const [offset, setOffset] = useState(0);
  const filters = text ? [{ filter: { case: field, value: { value: text, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [];
  const found = useQuery(PlatformInstances.method.searchInstances, {
    filters,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: InstanceFieldName.NAME,
  });
  const rows = found.data?.result ?? [];
  return (
    <>
      <div className="title">
        <h1>Instances</h1>
        {may("system.instance.write") && <NewInstance />}
      </div>
      <div className="filters">
        <SearchBox
          label="Find"
          value={text}
          onChange={(value) => {
            setText(value);
            setOffset(0);
          }}
        />
        <SelectField
          label="In"
          value={field}
          options={FIELDS}
          onChange={(key) => {
            setField(key);
            setOffset(0);
          }}
        />
      </div>
      <ApiError error={found.error} />
      <ResultTable
        label="Instances"
        columns={["Name", "Primary domain", "State"]}
        rows={rows}
        rowId={(i) => i.details?.id ?? ""}
        pending={found.isPending}
        empty="No instance matches."
      >
        {(i) => (
          <>
            <Cell>
              <Link to="/instances/$instanceId" params={{ instanceId: i.details?.id ?? "" }} search={(prev) => prev}>
                {i.name}
              </Link>
            </Cell>
            <Cell>{i.domains.find((d) => d.isPrimary)?.domain}</Cell>
            <Cell>{instanceStateLabel(i.state)}</Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </>
  );
}
