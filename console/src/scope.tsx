import type { MessageInitShape } from "@bufbuild/protobuf";
import { useNavigate, useSearch } from "@tanstack/react-router";
import type { RequestContextSchema } from "../../gen/platform/object/v3alpha/object_pb";

/**
 * The context the console acts in: the instance (every organization), or one organization
 * chosen in the switcher. It lives in the address (`?org=<id>`), so a page's link keeps it
 * and the browser's back button restores it; every request carries it as `ctx`.
 */
export interface Scope {
  orgId: string | undefined;
  ctx: MessageInitShape<typeof RequestContextSchema> | undefined;
  choose(orgId: string | undefined): void;
}

export function useScope(): Scope {
  const search = useSearch({ strict: false }) as { org?: string };
  const navigate = useNavigate();
  const orgId = search.org || undefined;
  return {
    orgId,
    ctx: orgId ? { type: { case: "orgId", value: orgId } } : undefined,
    choose: (next) => void navigate({ to: ".", search: (prev: Record<string, unknown>) => ({ ...prev, org: next }) }),
  };
}
