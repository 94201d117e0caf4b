import { Button } from "react-aria-components";

/** Server-side paging: which rows of how many, and the way to the previous and next page. */
export function Pager(props: { offset: number; limit: number; shown: number; total: number; onOffset(offset: number): void }) {
  const { offset, limit, shown, total, onOffset } = props;
  if (total === 0) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <span role="status">
        {offset + 1}–{offset + shown} of {total}
      </span>
      <Button isDisabled={offset === 0} onPress={() => onOffset(Math.max(0, offset - limit))}>
        Previous
      </Button>
      <Button isDisabled={offset + shown >= total} onPress={() => onOffset(offset + limit)}>
        Next
      </Button>
    </nav>
  );
}
