import type { ReactNode } from "react";
import { Column, Row, Table, TableBody, TableHeader } from "react-aria-components";

/**
 * A page of search results as a table: the first column names each row (screen readers
 * announce it with every cell), "Loading…" until the first answer, then `empty` when there
 * is nothing. `dependencies`: what the cells show besides their row (React Aria re-renders
 * a row only when its item or these change).
 */
export function ResultTable<T extends object>(props: {
  label: string;
  columns: string[];
  rows: T[];
  rowId(row: T): string;
  pending: boolean;
  empty: string;
  dependencies?: unknown[];
  children(row: T): ReactNode;
}) {
  const { label, columns, rows, rowId, pending, empty, dependencies, children } = props;
  return (
    <Table aria-label={label}>
      <TableHeader>
        {columns.map((c, i) => (
          <Column key={c} isRowHeader={i === 0}>
            {c}
          </Column>
        ))}
      </TableHeader>
      <TableBody items={rows} dependencies={dependencies} renderEmptyState={() => (pending ? "Loading…" : empty)}>
        {(row) => <Row id={rowId(row)}>{children(row)}</Row>}
      </TableBody>
    </Table>
  );
}
