import { Button } from "react-aria-components";

/** A row's Remove, named for screen readers by what it removes (every row has one). */
export function RemoveButton({ what, pending, onPress }: { what: string; pending: boolean; onPress(): void }) {
  return (
    <Button aria-label={`Remove ${what}`} onPress={onPress} isDisabled={pending}>
      Remove
    </Button>
  );
}
