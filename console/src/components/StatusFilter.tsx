import { useState } from "react";
import { SelectField } from "./SelectField";

/**
 * A log's status filter and its page: choosing another status starts at the first page
 * again. `filter` is the search filter for the chosen status, none for "any".
 */
export function useStatusFilter<K extends string, S>(statuses: readonly { key: K | "any"; label: string }[], statusOf: Record<K, S>) {
  const [status, setStatus] = useState<K | "any">("any");
  const [offset, setOffset] = useState(0);
  const filters = status === "any" ? [] : [{ filter: { case: "status" as const, value: { status: statusOf[status] } } }];
  const control = (
    <div className="filters">
      <SelectField
        label="Status"
        value={status}
        options={statuses}
        onChange={(s) => {
          setStatus(s);
          setOffset(0);
        }}
      />
    </div>
  );
  return { filters, offset, setOffset, control };
}
