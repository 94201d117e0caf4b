import { State } from "../../../../gen/platform/resources/object/v3alpha/object_pb";

/** A provider's effective state in the context asked for. */
export function StateBadge({ state }: { state: State }) {
  const active = state === State.EFFECTIVE_STATE_ACTIVE;
  return <span className={active ? "badge ok" : "badge off"}>{active ? "Active" : "Inactive"}</span>;
}
