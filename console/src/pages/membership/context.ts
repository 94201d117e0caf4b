import type { MessageInitShape } from "@bufbuild/protobuf";
import { OwnerType, type Owner, type RequestContextSchema } from "../../../../gen/platform/object/v3alpha/object_pb";

/** The context a membership request acts in; none: the instance of the console's address. */
export type Ctx = MessageInitShape<typeof RequestContextSchema> | undefined;

export const SYSTEM_CTX = { type: { case: "system" as const, value: true } };

/** The request context of a membership's own context, where its roles are changed or removed. */
export function ctxOf(owner: Owner | undefined): Ctx {
  switch (owner?.type) {
    case OwnerType.SYSTEM:
      return SYSTEM_CTX;
    case OwnerType.ORG:
      return { type: { case: "orgId", value: owner.id } };
    default:
      return undefined;
  }
}
