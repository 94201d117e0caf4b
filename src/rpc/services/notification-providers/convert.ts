import { State, type TextFilterMethod } from "../../../../gen/platform/resources/object/v3alpha/object_pb.js";
import type { ProviderConfig, ProviderView } from "../../../domain/notification-provider/model.js";
import type { ProviderFilter, ProviderSortColumn } from "../../../domain/notification-provider/queries.js";
import { detailsToProto, textMatchFromProto } from "../convert.js";

/** A search filter of either family: their messages have the same shape. */
export interface FilterMessage {
  filter:
    | { case: "inIds"; value: { ids: string[] } }
    | { case: "description"; value: { description: string; method: TextFilterMethod } }
    | { case: "state"; value: { state: State } }
    | { case: undefined; value?: undefined };
}

export function filterFromProto(f: FilterMessage): ProviderFilter {
  switch (f.filter.case) {
    case "inIds":
      return { ids: f.filter.value.ids };
    case "description":
      return { description: { value: f.filter.value.description, match: textMatchFromProto(f.filter.value.method) } };
    case "state":
      return { state: f.filter.value.state === State.EFFECTIVE_STATE_ACTIVE ? "active" : "inactive" };
    default:
      throw new Error("validation lets no empty provider filter through");
  }
}

/** Both families' field name enums number the columns alike: unspecified, id, creation, change, description. */
const SORT_COLUMNS: readonly ProviderSortColumn[] = ["created_at", "id", "created_at", "change_date", "description"];

export const sortFromProto = (column: number): ProviderSortColumn => SORT_COLUMNS[column] ?? "created_at";

/** The fields every read of either family carries, and an `http` provider's kind. */
export function readCommon(view: ProviderView) {
  return {
    details: detailsToProto(view.details),
    state: view.state === "active" ? State.EFFECTIVE_STATE_ACTIVE : State.EFFECTIVE_STATE_INACTIVE,
    description: view.description,
  };
}

export const httpRead = (config: ProviderConfig & { kind: "http" }) => ({ case: "http" as const, value: { url: config.url } });

/** A patch's settings without the fields it left out. */
export function given(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
}
