import { useQuery } from "@connectrpc/connect-query";
import { useMemo } from "react";
import { UserSchemaFieldName, UserSchemaState, type GetUserSchema } from "../../../../gen/platform/resources/user_schema/v3alpha/user_schema_pb";
import { PlatformUserSchemas } from "../../../../gen/platform/resources/user_schema/v3alpha/user_schema_service_pb";
import { usePermissions } from "../../api/permissions";

/**
 * The instance's user schemas, for the pages of their users: the kind a user's schema names,
 * the schemas a new user may take. Schemas are few (a kind of user each), so one search holds
 * them all. Only the instance's administrators may read them (`user.schema.read`, asked of the
 * instance: an organization's owner holds it nowhere); for anyone else `readable` is false and
 * the pages say "Schema user" without asking.
 */
export function useUserSchemas() {
  const readable = usePermissions({ inInstance: true }).may("user.schema.read");
  const found = useQuery(
    PlatformUserSchemas.method.searchUserSchemas,
    { query: { limit: 1000, asc: true }, sortingColumn: UserSchemaFieldName.TYPE },
    { enabled: readable },
  );
  return useMemo(() => {
    const all = found.data?.result ?? [];
    return {
      readable,
      error: found.error,
      byId: new Map<string, GetUserSchema>(all.map((s) => [s.details?.id ?? "", s])),
      active: all.filter((s) => s.state === UserSchemaState.ACTIVE),
    };
  }, [readable, found.data, found.error]);
}

/** The kind of user a schema user is: its schema's type where the schemas are readable. */
export const schemaKind = (schemas: Map<string, GetUserSchema>, schemaId: string) => schemas.get(schemaId)?.type ?? "Schema user";
