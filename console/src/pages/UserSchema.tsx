import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate, useParams } from "@tanstack/react-router";
import { useForm } from "react-hook-form";
import { UserSchemaState } from "../../../gen/platform/resources/user_schema/v3alpha/user_schema_pb";
import { PlatformUserSchemas } from "../../../gen/platform/resources/user_schema/v3alpha/user_schema_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { ConfirmAction } from "../components/ConfirmAction";
import { SettingsForm } from "../components/SettingsForm";
import { StateToggle } from "../components/StateToggle";
import { SchemaFields } from "./user-schema/SchemaFields";
import { schemaFields, schemaValues, type SchemaValues } from "./user-schema/form";
import { SchemaUsers } from "./user-schema/SchemaUsers";

/**
 * One user schema: its type, authenticators and JSON Schema (a changed one raises the
 * revision), its state, deleting it, and its users where the person may read users.
 */
export function UserSchema() {
  const { schemaId } = useParams({ from: "/user-schemas/$schemaId" });
  const { may } = usePermissions();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformUserSchemas, cardinality: undefined }) });
  const found = useQuery(PlatformUserSchemas.method.getUserSchema, { id: schemaId });
  const form = useForm<SchemaValues>({ values: schemaValues(found.data?.userSchema) });
  const patch = useMutation(PlatformUserSchemas.method.patchUserSchema, { onSuccess: refresh });
  const deactivate = useMutation(PlatformUserSchemas.method.deactivateUserSchema, { onSuccess: refresh });
  const activate = useMutation(PlatformUserSchemas.method.activateUserSchema, { onSuccess: refresh });
  const remove = useMutation(PlatformUserSchemas.method.deleteUserSchema);
  const s = found.data?.userSchema;
  if (found.error) return <ApiError error={found.error} />;
  if (!s) return <p role="status">Loading…</p>;
  const active = s.state === UserSchemaState.ACTIVE;
  const write = may("user.schema.write");
  return (
    <>
      <div className="title">
        <h1>{s.type}</h1>
        <span className={active ? "badge ok" : "badge off"}>{active ? "Active" : "Inactive"}</span>
      </div>
      <dl className="facts">
        <dt>ID</dt>
        <dd>
          <code>{schemaId}</code>
        </dd>
        <dt>Revision</dt>
        <dd>{s.revision}</dd>
      </dl>
      <div className="actions">
        {write && (
          <StateToggle
            active={active}
            pending={deactivate.isPending || activate.isPending}
            onChange={(on) => (on ? activate : deactivate).mutate({ id: schemaId })}
          />
        )}
        {may("user.schema.delete") && (
          <ConfirmAction
            trigger="Delete…"
            title={`Delete ${s.type}?`}
            confirm="Delete the schema"
            onConfirm={async () => {
              await remove.mutateAsync({ id: schemaId });
              // Away first: refreshed here, the page would fetch the schema it just deleted.
              await navigate({ to: "/user-schemas", search: (prev) => prev });
              await refresh();
            }}
          >
            <p>Only a schema no user uses can be deleted. This cannot be undone.</p>
          </ConfirmAction>
        )}
      </div>
      <ApiError error={deactivate.error ?? activate.error} />
      <SettingsForm
        mayWrite={write}
        onSubmit={form.handleSubmit((v) => patch.mutate({ id: schemaId, userSchema: schemaFields(v) }))}
        pending={patch.isPending}
        error={patch.error}
        saved={patch.isSuccess && !form.formState.isDirty}
      >
        <SchemaFields control={form.control} />
      </SettingsForm>
      {may("user.read") && <SchemaUsers schemaId={schemaId} />}
    </>
  );
}
