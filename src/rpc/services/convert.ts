import { create } from "@bufbuild/protobuf";
import { timestampFromDate, type Duration } from "@bufbuild/protobuf/wkt";
import { OwnerType } from "../../../gen/platform/object/v3alpha/object_pb.js";
import {
  DetailsSchema,
  ListDetailsSchema,
  TextFilterMethod,
  type Details,
  type ListDetails,
} from "../../../gen/platform/resources/object/v3alpha/object_pb.js";
import type { ObjectDetails, OwnerKind } from "../../domain/details.js";
import type { ProjectionState } from "../../store/projection-state.js";
import type { TextMatch } from "../../store/search.js";

export const OWNER_TYPES: Record<OwnerKind, OwnerType> = {
  system: OwnerType.SYSTEM,
  instance: OwnerType.INSTANCE,
  org: OwnerType.ORG,
  project_grant: OwnerType.PROJECT_GRANT,
};

export function detailsToProto(d: ObjectDetails): Details {
  return create(DetailsSchema, {
    id: d.id,
    sequence: BigInt(d.sequence),
    changeDate: timestampFromDate(d.changeDate),
    resourceOwner: { type: OWNER_TYPES[d.owner.type], id: d.owner.id },
  });
}

function listDetailsToProto(found: { total: number; rows: unknown[] }, page: { offset: number; limit: number }, state: ProjectionState): ListDetails {
  return create(ListDetailsSchema, {
    appliedLimit: page.limit,
    totalResult: BigInt(found.total),
    endOfList: page.offset + found.rows.length >= found.total,
    processedSequence: BigInt(state.position),
    ...(state.timestamp && { timestamp: timestampFromDate(state.timestamp) }),
  });
}

const TEXT_MATCHES: Record<TextFilterMethod, TextMatch> = {
  [TextFilterMethod.EQUALS]: "equals",
  [TextFilterMethod.EQUALS_IGNORE_CASE]: "equals_ignore_case",
  [TextFilterMethod.STARTS_WITH]: "starts_with",
  [TextFilterMethod.STARTS_WITH_IGNORE_CASE]: "starts_with_ignore_case",
  [TextFilterMethod.CONTAINS]: "contains",
  [TextFilterMethod.CONTAINS_IGNORE_CASE]: "contains_ignore_case",
  [TextFilterMethod.ENDS_WITH]: "ends_with",
  [TextFilterMethod.ENDS_WITH_IGNORE_CASE]: "ends_with_ignore_case",
};

export function textMatchFromProto(method: TextFilterMethod): TextMatch {
  return TEXT_MATCHES[method];
}

export function durationToMs(d: Duration): number {
  return Math.ceil(Number(d.seconds) * 1000 + d.nanos / 1e6);
}

export function msToDuration(ms: number): { seconds: bigint; nanos: number } {
  return { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 };
}

/** The answer of every search: the list details and the page's results. */
export function searchResult<V, P>(
  found: { total: number; rows: V[]; state: ProjectionState },
  page: { offset: number; limit: number },
  toProto: (view: V) => P,
) {
  return { details: listDetailsToProto(found, page, found.state), result: found.rows.map(toProto) };
}
