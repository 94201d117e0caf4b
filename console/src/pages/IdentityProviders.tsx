import { useQuery } from "@connectrpc/connect-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Cell } from "react-aria-components";
import { IDPFieldName } from "../../../gen/platform/resources/idp/v3alpha/idp_pb";
import { PlatformIdentityProviders } from "../../../gen/platform/resources/idp/v3alpha/idp_service_pb";
import { StatePolicy, TextFilterMethod } from "../../../gen/platform/resources/object/v3alpha/object_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { inheritedFrom } from "../components/Inherited";
import { Pager } from "../components/Pager";
import { ResultTable } from "../components/ResultTable";
import { SearchBox } from "../components/SearchBox";
import { useScope } from "../scope";
import { NewIdp } from "./idp/NewIdp";
import { OwnerName } from "./idp/OwnerName";
import { StateBadge } from "./idp/StateBadge";
import { typeLabel } from "./idp/kinds";

const LIMIT = 20;

/**
 * The identity providers of the context the console acts in, those it inherits and those of
 * the contexts below: found by name on the server, a page at a time, each with its state
 * here and where that comes from.
 */
export function IdentityProviders() {
  const { may } = usePermissions();
  const { ctx } = useScope();
  const [name, setName] = useState("");
  const [offset, setOffset] = useState(0);
  const filters = name ? [{ filter: { case: "name" as const, value: { name, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [];
  const found = useQuery(PlatformIdentityProviders.method.searchIDPs, {
    ctx,
    filters,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: IDPFieldName.IDP_FIELD_NAME_NAME,
  });
  const rows = found.data?.result ?? [];
  return (
    <>
      <div className="title">
        <h1>Identity providers</h1>
        {may("idp.write") && <NewIdp />}
      </div>
      <SearchBox
        label="Find providers by name"
        value={name}
        onChange={(value) => {
          setName(value);
          setOffset(0);
        }}
      />
      <ApiError error={found.error} />
      <ResultTable
        label="Identity providers"
        columns={["Name", "Type", "State here", "Defined in"]}
        rows={rows}
        rowId={(g) => g.details?.id ?? ""}
        pending={found.isPending}
        empty="No identity providers yet."
      >
        {(g) => (
          <>
            <Cell>
              <Link to="/identity-providers/$idpId" params={{ idpId: g.details?.id ?? "" }} search={(prev) => prev}>
                {g.idp?.name}
              </Link>
            </Cell>
            <Cell>{typeLabel(g.type)}</Cell>
            <Cell>
              <StateBadge state={g.state} />
              {g.parent?.parent && <span className="hint">{g.idp?.statePolicy === StatePolicy.INHERIT ? inheritedFrom(g.parent.parent) : "Set here"}</span>}
            </Cell>
            <Cell>
              <OwnerName owner={g.details?.resourceOwner} />
            </Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </>
  );
}
