import type { JsonObject } from "@bufbuild/protobuf";
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { useState, type Dispatch, type SetStateAction } from "react";
import { Cell, Column, Row, Table, TableBody, TableHeader } from "react-aria-components";
import { useForm, type DefaultValues, type FieldValues } from "react-hook-form";
import { TextFilterMethod } from "../../../gen/platform/resources/object/v3alpha/object_pb";
import { UserFieldName, UserState, UserType, type GetUser } from "../../../gen/platform/resources/user/v3alpha/user_pb";
import { PlatformUsers } from "../../../gen/platform/resources/user/v3alpha/user_service_pb";
import type { GetUserSchema } from "../../../gen/platform/resources/user_schema/v3alpha/user_schema_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { CheckboxInput, RadioInput } from "../components/ChoiceInputs";
import { FormDialog } from "../components/FormDialog";
import { Pager } from "../components/Pager";
import { SearchBox } from "../components/SearchBox";
import { SelectField } from "../components/SelectField";
import { TextInput } from "../components/TextInput";
import { useScope } from "../scope";
import { DataInput } from "./user/SchemaData";
import { schemaKind, useUserSchemas } from "./user-schema/schemas";

const LIMIT = 20;

const FIELDS = [
  { key: "loginName", label: "Login name" },
  { key: "displayName", label: "Name" },
  { key: "email", label: "Email" },
] as const;
const TYPES = [
  { key: "any", label: "Every kind" },
  { key: "human", label: "People" },
  { key: "machine", label: "Service accounts" },
  { key: "schema", label: "Schema users" },
] as const;
const TYPE_OF = { human: UserType.HUMAN, machine: UserType.MACHINE, schema: UserType.SCHEMA } as const;
const STATES = [
  { key: "any", label: "Any state" },
  { key: "active", label: "Active" },
  { key: "inactive", label: "Deactivated" },
  { key: "locked", label: "Locked" },
] as const;
const STATE_OF = { active: UserState.ACTIVE, inactive: UserState.INACTIVE, locked: UserState.LOCKED } as const;

export const stateLabel = (state: UserState) =>
  state === UserState.ACTIVE ? "Active" : state === UserState.LOCKED ? "Locked" : state === UserState.INACTIVE ? "Deactivated" : "Unknown";
/** A user's name, leading to its page. */
export function UserLink({ user }: { user: GetUser }) {
  return (
    <Link to="/users/$userId" params={{ userId: user.details?.id ?? "" }} search={(prev) => prev}>
      {displayName(user)}
    </Link>
  );
}

/** What kind of user `u` is, in the words of the list and the user's page. */
export const kindLabel = (u: GetUser, schemas: Map<string, GetUserSchema>) =>
  u.type.case === "human" ? "Person" : u.type.case === "machine" ? "Service account" : schemaKind(schemas, u.type.value?.schemaId ?? "");
export const displayName = (u: GetUser) =>
  u.type.case === "human"
    ? u.type.value.profile?.displayName || `${u.type.value.profile?.givenName ?? ""} ${u.type.value.profile?.familyName ?? ""}`.trim()
    : u.type.case === "machine"
      ? u.type.value.name
      : u.username;

/**
 * People, service accounts and users of the user schemas in the chosen context, found on the
 * server a page at a time; creating one. A schema user's kind is its schema's type, and the
 * list can be narrowed to one schema, where the instance's schemas are readable.
 */
export function Users() {
  const { may } = usePermissions();
  const { ctx } = useScope();
  const schemas = useUserSchemas();
  const [schemaId, setSchemaId] = useState("any");
  const [text, setText] = useState("");
  const [field, setField] = useState<(typeof FIELDS)[number]["key"]>("loginName");
  const [type, setType] = useState<(typeof TYPES)[number]["key"]>("any");
  const [state, setState] = useState<(typeof STATES)[number]["key"]>("any");
  const [offset, setOffset] = useState(0);
  const filters = [
    ...(text ? [{ filter: { case: field, value: { value: text, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : []),
    ...(type !== "any" ? [{ filter: { case: "type" as const, value: { type: TYPE_OF[type] } } }] : []),
    ...(schemaId !== "any" ? [{ filter: { case: "schema" as const, value: { schemaId } } }] : []),
    ...(state !== "any" ? [{ filter: { case: "state" as const, value: { state: STATE_OF[state] } } }] : []),
  ];
  const found = useQuery(PlatformUsers.method.searchUsers, {
    filters,
    ctx,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: UserFieldName.USERNAME,
  });
  const rows = found.data?.result ?? [];
  const again =
    <T,>(set: Dispatch<SetStateAction<T>>) =>
    (v: T) => {
      set(v);
      setOffset(0);
    };
  return (
    <>
      <div className="title">
        <h1>Users</h1>
        {may("user.write") && (
          <div className="actions">
            <CreatePerson />
            <CreateServiceAccount />
            {schemas.readable && <CreateSchemaUser />}
          </div>
        )}
      </div>
      <div className="filters">
        <SearchBox label="Find" value={text} onChange={again(setText)} />
        <SelectField label="In" value={field} options={FIELDS} onChange={again(setField)} />
        <SelectField label="Kind" value={type} options={TYPES} onChange={again(setType)} />
        <SelectField label="State" value={state} options={STATES} onChange={again(setState)} />
        {schemas.readable && (
          <SelectField
            label="Schema"
            value={schemaId}
            options={[{ key: "any", label: "Any schema" }, ...[...schemas.byId.values()].map((s) => ({ key: s.details?.id ?? "", label: s.type }))]}
            onChange={again(setSchemaId)}
          />
        )}
      </div>
      <ApiError error={found.error ?? schemas.error} />
      <Table aria-label="Users">
        <TableHeader>
          <Column isRowHeader>Name</Column>
          <Column>Login name</Column>
          <Column>Kind</Column>
          <Column>State</Column>
        </TableHeader>
        <TableBody items={rows} dependencies={[schemas.byId]} renderEmptyState={() => (found.isPending ? "Loading…" : "No user matches.")}>
          {(u) => (
            <Row id={u.details?.id ?? ""}>
              <Cell>
                <UserLink user={u} />
              </Cell>
              <Cell>{u.loginName}</Cell>
              <Cell>{kindLabel(u, schemas.byId)}</Cell>
              <Cell>{stateLabel(u.state)}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </>
  );
}

/**
 * A dialog that creates a user: its open state, its form, and the CreateUser call, after which
 * it closes and leads to the new user's page, with every list of users refetched.
 */
function useCreateDialog<T extends FieldValues>(defaultValues: DefaultValues<T>) {
  const [open, setOpen] = useState(false);
  const navigate = useNavigate();
  const queries = useQueryClient();
  const form = useForm<T>({ defaultValues });
  const create = useMutation(PlatformUsers.method.createUser, {
    onSuccess: async (answer) => {
      await queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformUsers, cardinality: undefined }) });
      setOpen(false);
      form.reset();
      await navigate({ to: "/users/$userId", params: { userId: answer.details?.id ?? "" }, search: (prev) => prev });
    },
  });
  return { open, setOpen, form, create };
}

interface PersonForm {
  username: string;
  givenName: string;
  familyName: string;
  email: string;
  setPassword: boolean;
  password: string;
}

/** A person: invited by email to choose a password, or given one now. */
function CreatePerson() {
  const { ctx } = useScope();
  const { open, setOpen, form, create } = useCreateDialog<PersonForm>({
    username: "",
    givenName: "",
    familyName: "",
    email: "",
    setPassword: false,
    password: "",
  });
  const withPassword = form.watch("setPassword");
  const required = (what: string) => ({ required: `Give ${what}.`, maxLength: { value: 200, message: "At most 200 characters." } });
  const submit = form.handleSubmit((v) =>
    create.mutate({
      ctx,
      user: {
        username: v.username.trim(),
        type: {
          case: "human",
          value: {
            profile: { givenName: v.givenName.trim(), familyName: v.familyName.trim() },
            email: { address: v.email.trim() },
            ...(v.setPassword && { passwordType: { case: "password" as const, value: v.password } }),
          },
        },
      },
    }),
  );
  return (
    <FormDialog label="New person" primary open={open} onOpenChange={setOpen} onSubmit={submit} submit="Create" pending={create.isPending} error={create.error}>
      <TextInput control={form.control} name="username" label="Username" rules={required("a username")} autoFocus />
      <TextInput control={form.control} name="givenName" label="Given name" rules={required("a given name")} />
      <TextInput control={form.control} name="familyName" label="Family name" rules={required("a family name")} />
      <TextInput
        control={form.control}
        name="email"
        label="Email"
        type="email"
        rules={required("an email address")}
        description="Without a password, the invitation goes here."
      />
      <CheckboxInput control={form.control} name="setPassword" label="Set a password now instead of inviting" />
      {withPassword && (
        <TextInput
          control={form.control}
          name="password"
          label="Password"
          type="password"
          autoComplete="new-password"
          rules={{ required: "Give a password." }}
        />
      )}
    </FormDialog>
  );
}

/** A service account: a name now; tokens, keys or a secret on its page. */
function CreateServiceAccount() {
  const { ctx } = useScope();
  const { open, setOpen, form, create } = useCreateDialog<{ username: string; name: string; description: string }>({ username: "", name: "", description: "" });
  return (
    <FormDialog
      label="New service account"
      open={open}
      onOpenChange={setOpen}
      onSubmit={form.handleSubmit((v) =>
        create.mutate({
          ctx,
          user: { username: v.username.trim(), type: { case: "machine", value: { name: v.name.trim(), description: v.description.trim() } } },
        }),
      )}
      submit="Create"
      pending={create.isPending}
      error={create.error}
    >
      <TextInput control={form.control} name="username" label="Username" rules={{ required: "Give a username." }} autoFocus />
      <TextInput control={form.control} name="name" label="Name" rules={{ required: "Give a name." }} />
      <TextInput control={form.control} name="description" label="Description" rules={{ maxLength: { value: 500, message: "At most 500 characters." } }} />
    </FormDialog>
  );
}

interface SchemaUserForm {
  schemaId: string;
  username: string;
  data: string;
}

/**
 * A user of a user schema: its schema (an active one), a username and its data as a JSON
 * object, which the schema validates on the server (every violation named by its JSON
 * pointer, under the form).
 */
function CreateSchemaUser() {
  const { ctx } = useScope();
  const { active } = useUserSchemas();
  const { open, setOpen, form, create } = useCreateDialog<SchemaUserForm>({ schemaId: "", username: "", data: "{}" });
  return (
    <FormDialog
      label="New schema user"
      open={open}
      onOpenChange={setOpen}
      onSubmit={form.handleSubmit((v) =>
        create.mutate({
          ctx,
          user: { username: v.username.trim(), type: { case: "schema", value: { schemaId: v.schemaId, data: JSON.parse(v.data) as JsonObject } } },
        }),
      )}
      submit="Create"
      pending={create.isPending}
      error={create.error}
    >
      <TextInput control={form.control} name="username" label="Username" rules={{ required: "Give a username." }} autoFocus />
      <RadioInput
        control={form.control}
        name="schemaId"
        label="Schema"
        options={active.map((s) => ({ value: s.details?.id ?? "", label: s.type }))}
        description={active.length === 0 ? "No active user schema: create or activate one first." : undefined}
        rules={{ required: "Choose the user's schema." }}
      />
      <DataInput control={form.control} description="A JSON object that meets the schema." />
    </FormDialog>
  );
}
