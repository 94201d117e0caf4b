import { Button } from "react-aria-components";
import { OwnerType, type Owner } from "../../../gen/platform/object/v3alpha/object_pb";

/**
 * Where a resolved setting's value comes from, beside the setting: "Set here" (with a button
 * that removes this context's own value, so the parent's applies again) or the context it is
 * inherited from. The API leaves `owner` out when the value is set in the context asked for.
 */
export function Inherited({
  setting,
  owner,
  mayReset,
  pending,
  onReset,
}: {
  setting: string;
  owner: Owner | undefined;
  mayReset: boolean;
  pending?: boolean;
  onReset(): void;
}) {
  if (owner) return <p className="inherited">{inheritedFrom(owner)}</p>;
  return (
    <p className="inherited">
      <span className="badge">Set here</span>
      {mayReset && (
        <Button className="quiet" aria-label={`Reset ${setting}`} onPress={onReset} isDisabled={pending}>
          Reset
        </Button>
      )}
    </p>
  );
}

/** The source of an inherited value, in words. */
export function inheritedFrom(owner: Owner): string {
  switch (owner.type) {
    case OwnerType.SYSTEM:
      return "Default of the system";
    case OwnerType.INSTANCE:
      return "Inherited from the instance";
    case OwnerType.ORG:
      return `Inherited from organization ${owner.id}`;
    default:
      return "Inherited";
  }
}
