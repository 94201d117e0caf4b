import { Button } from "react-aria-components";

/** Deactivating what is active, reactivating what is not. */
export function StateToggle({ active, pending, onChange }: { active: boolean; pending: boolean; onChange(active: boolean): void }) {
  return (
    <Button onPress={() => onChange(!active)} isDisabled={pending}>
      {active ? "Deactivate" : "Reactivate"}
    </Button>
  );
}
