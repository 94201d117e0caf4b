import { Link } from "@tanstack/react-router";
import { useState, type ReactNode } from "react";
import { Cell } from "react-aria-components";
import { TextFilterMethod } from "../../../../gen/platform/resources/object/v3alpha/object_pb";
import { ApiError } from "../../components/ApiError";
import { Pager } from "../../components/Pager";
import { ResultTable } from "../../components/ResultTable";
import { SearchBox } from "../../components/SearchBox";
import type { ProviderFamily } from "./families";
import { MessagesTabs } from "./MessagesTabs";
import type { ProviderRow } from "./provider-form";

const LIMIT = 20;

/** The search a list asks the server for: by description, a page at a time (a new text starts at the first page). */
export function useDescriptionSearch() {
  const [text, setText] = useState("");
  const [offset, setOffset] = useState(0);
  const filters = text ? [{ filter: { case: "description" as const, value: { description: text, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [];
  const search = (value: string) => {
    setText(value);
    setOffset(0);
  };
  return { text, search, offset, setOffset, filters, query: { offset: BigInt(offset), limit: LIMIT, asc: true } };
}

/** A family's search, as connect-query answers it. */
interface Found<R> {
  data?: { result: R[]; details?: { totalResult: bigint } };
  isPending: boolean;
  error: unknown;
}

/** A family's providers: found by description, which one is active, and (for who may) a new one. */
export function ProviderList<R>(props: {
  family: ProviderFamily<unknown, unknown>;
  search: ReturnType<typeof useDescriptionSearch>;
  found: Found<R>;
  row(read: R): ProviderRow;
  create: ReactNode;
}) {
  const { family, search, found } = props;
  const rows = (found.data?.result ?? []).map(props.row);
  const noun = `${family.noun}s`;
  return (
    <>
      <div className="title">
        <h1>Messages</h1>
        {props.create}
      </div>
      <MessagesTabs />
      <p>{family.fallback}</p>
      <SearchBox label={`Find ${noun} by description`} value={search.text} onChange={search.search} />
      <ApiError error={found.error} />
      <ResultTable
        label={noun[0]!.toUpperCase() + noun.slice(1)}
        columns={["Description", "Sends through", "State"]}
        rows={rows}
        rowId={(p) => p.id}
        pending={found.isPending}
        empty={search.text ? `No ${noun} match.` : `No ${noun} yet.`}
      >
        {(p) => (
          <>
            <Cell>
              <Link to={`${family.list}/$providerId`} params={{ providerId: p.id }} search={(prev) => prev}>
                {p.description || p.id}
              </Link>
            </Cell>
            <Cell>
              {p.kind} <code>{p.where}</code>
            </Cell>
            <Cell>
              <span className={p.active ? "badge ok" : "badge"}>{p.active ? "Active" : "Inactive"}</span>
            </Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={search.offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={search.setOffset} />
    </>
  );
}
