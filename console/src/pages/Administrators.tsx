import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { Cell } from "react-aria-components";
import { useForm } from "react-hook-form";
import { OwnerType } from "../../../gen/platform/object/v3alpha/object_pb";
import { MembershipFieldName } from "../../../gen/platform/resources/membership/v3alpha/membership_pb";
import { PlatformMemberships } from "../../../gen/platform/resources/membership/v3alpha/membership_service_pb";
import { TextFilterMethod } from "../../../gen/platform/resources/object/v3alpha/object_pb";
import { UserFieldName } from "../../../gen/platform/resources/user/v3alpha/user_pb";
import { PlatformUsers } from "../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { usePermissions } from "../api/permissions";
import { useUsersById } from "../api/users-by-id";
import { ApiError } from "../components/ApiError";
import { CheckboxesInput, type Option } from "../components/ChoiceInputs";
import { FormDialog } from "../components/FormDialog";
import { Pager } from "../components/Pager";
import { ResultTable } from "../components/ResultTable";
import { SearchChoice, useSearchDialog } from "../components/SearchChoice";
import { SelectField } from "../components/SelectField";
import { useScope } from "../scope";
import { SYSTEM_CTX, type Ctx } from "./membership/context";
import { RoleBadges } from "./membership/RoleBadges";
import { MembershipActions } from "./membership/MembershipActions";
import { displayName } from "./Users";

const LIMIT = 20;
const ANY = "any";

/**
 * Who holds roles where the console acts: the chosen organization, else the instance; and,
 * for system members, the system. Choosing another organization starts afresh (keyed).
 */
export function Administrators() {
  const { orgId } = useScope();
  return <AdministratorsIn key={orgId ?? ""} orgId={orgId} />;
}

function AdministratorsIn({ orgId }: { orgId: string | undefined }) {
  const { ctx: scoped } = useScope();
  const { may, systemMember } = usePermissions();
  const queries = useQueryClient();
  const [where, setWhere] = useState<"here" | "system">("here");
  const [role, setRole] = useState(ANY);
  const [offset, setOffset] = useState(0);
  const system = systemMember && where === "system";
  const ctx = system ? SYSTEM_CTX : scoped;
  const available = useQuery(PlatformMemberships.method.listAvailableRoles, { ctx });
  const roles: Option[] = useMemo(() => (available.data?.roles ?? []).map((r) => ({ value: r.name, label: r.name })), [available.data]);
  // Every membership answer, the person's own permissions among them: a change may be to their own roles.
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformMemberships, cardinality: undefined }) });
  const mayWrite = system || may("member.write");
  return (
    <>
      <div className="title">
        <h1>Administrators</h1>
        {mayWrite && may("user.read") && <AddAdministrator ctx={ctx} roles={roles} onAdded={refresh} />}
      </div>
      <div className="filters">
        {systemMember && (
          <SelectField
            label="Where"
            value={where}
            options={[
              { key: "here", label: orgId ? "This organization" : "This instance" },
              { key: "system", label: "System (every instance)" },
            ]}
            onChange={(next) => {
              // The roles of one context are not those of another.
              setWhere(next);
              setRole(ANY);
              setOffset(0);
            }}
          />
        )}
        <SelectField
          label="Role"
          value={role}
          options={[{ key: ANY, label: "Any role" }, ...roles.map((r) => ({ key: r.value, label: r.label }))]}
          onChange={(next) => {
            setRole(next);
            setOffset(0);
          }}
        />
      </div>
      <ApiError error={available.error} />
      <Memberships
        ctx={ctx}
        instanceOnly={!system && !orgId}
        role={role}
        offset={offset}
        onOffset={setOffset}
        roles={roles}
        mayWrite={mayWrite}
        mayDelete={system || may("member.delete")}
        mayReadUsers={may("user.read")}
        onChanged={refresh}
      />
    </>
  );
}

interface MembershipsProps {
  ctx: Ctx;
  /** Without an organization the search answers the instance's and every organization's: only the instance's are wanted. */
  instanceOnly: boolean;
  role: string;
  offset: number;
  onOffset(offset: number): void;
  roles: Option[];
  mayWrite: boolean;
  mayDelete: boolean;
  mayReadUsers: boolean;
  onChanged(): Promise<void>;
}

/** One page of the context's memberships, each user by login name and name where the person may read users; changing and removing them. */
function Memberships({ ctx, instanceOnly, role, offset, onOffset, roles, mayWrite, mayDelete, mayReadUsers, onChanged }: MembershipsProps) {
  const filters = [
    ...(instanceOnly ? [{ filter: { case: "contextType" as const, value: { type: OwnerType.INSTANCE } } }] : []),
    ...(role !== ANY ? [{ filter: { case: "role" as const, value: { role } } }] : []),
  ];
  const found = useQuery(PlatformMemberships.method.searchMemberships, {
    ctx,
    filters,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: MembershipFieldName.CREATION_DATE,
  });
  const rows = found.data?.result ?? [];
  const users = useUsersById(
    rows.map((m) => m.userId),
    mayReadUsers,
  );
  return (
    <>
      <ApiError error={found.error} />
      <ResultTable
        label="Administrators"
        columns={["User", "Name", "Roles", "Actions"]}
        rows={rows}
        rowId={(m) => m.userId}
        pending={found.isPending}
        empty="No administrator matches."
        dependencies={[users, roles, mayWrite, mayDelete]}
      >
        {(m) => {
          const user = users.get(m.userId);
          const who = user?.loginName ?? m.userId;
          return (
            <>
              <Cell>{who}</Cell>
              <Cell>{user ? displayName(user) : ""}</Cell>
              <Cell>
                <RoleBadges roles={m.roles} />
              </Cell>
              <Cell>
                <MembershipActions ctx={ctx} membership={m} who={who} roles={roles} mayWrite={mayWrite} mayDelete={mayDelete} onChanged={onChanged} />
              </Cell>
            </>
          );
        }}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={onOffset} />
    </>
  );
}

interface AddValues {
  userId: string;
  roles: string[];
}

/** A user found by login name on the server, chosen among the matches, and their roles here. */
function AddAdministrator({ ctx, roles, onAdded }: { ctx: Ctx; roles: Option[]; onAdded(): Promise<void> }) {
  const dialog = useSearchDialog();
  const form = useForm<AddValues>({ defaultValues: { userId: "", roles: [] } });
  const text = dialog.text.trim();
  const filters = [{ filter: { case: "loginName" as const, value: { value: text, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }];
  const found = useQuery(
    PlatformUsers.method.searchUsers,
    { filters, query: { limit: 10, asc: true }, sortingColumn: UserFieldName.USERNAME },
    { enabled: dialog.open && text !== "" },
  );
  const add = useMutation(PlatformMemberships.method.createMembership, {
    onSuccess: async () => {
      await onAdded();
      dialog.done();
      form.reset();
    },
  });
  const [userId, roleNames] = form.watch(["userId", "roles"]);
  const missing = !userId ? "Choose one of the users found." : roleNames.length === 0 ? "Choose at least one role." : undefined;
  const submit = form.handleSubmit((v) => {
    dialog.setTried(true);
    if (missing === undefined) add.mutate({ ctx, membership: { userId: v.userId, roles: v.roles } });
  });
  return (
    <FormDialog
      label="Add an administrator"
      primary
      open={dialog.open}
      onOpenChange={dialog.onOpenChange}
      onSubmit={submit}
      submit="Add"
      pending={add.isPending}
      error={dialog.tried && missing ? new Error(missing) : add.error}
    >
      <SearchChoice
        control={form.control}
        name="userId"
        search="Find by login name"
        label="User"
        text={dialog.text}
        onText={dialog.setText}
        matches={(found.data?.result ?? []).map((u) => ({ value: u.details?.id ?? "", label: `${u.loginName} (${displayName(u)})` }))}
        answered={Boolean(found.data)}
        none="No user matches."
        error={found.error}
      />
      <CheckboxesInput control={form.control} name="roles" label="Roles" options={roles} />
    </FormDialog>
  );
}
