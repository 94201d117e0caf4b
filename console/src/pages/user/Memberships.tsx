import { createConnectQueryKey, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useMemo, useState } from "react";
import { Cell } from "react-aria-components";
import { OwnerType } from "../../../../gen/platform/object/v3alpha/object_pb";
import { MembershipFieldName, type GetMembership } from "../../../../gen/platform/resources/membership/v3alpha/membership_pb";
import { PlatformMemberships } from "../../../../gen/platform/resources/membership/v3alpha/membership_service_pb";
import { PlatformOrganizations } from "../../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { usePermissions } from "../../api/permissions";
import { ApiError } from "../../components/ApiError";
import { Pager } from "../../components/Pager";
import { ResultTable } from "../../components/ResultTable";
import { useScope } from "../../scope";
import { ctxOf, SYSTEM_CTX } from "../membership/context";
import { RoleBadges } from "../membership/RoleBadges";
import { MembershipActions } from "../membership/MembershipActions";

const LIMIT = 20;

/**
 * Where the user holds administrator roles (memberships), each context linked to its
 * Administrators page; changing and removing them. Memberships of the system are asked for
 * apart (only system members see them), and only where the console acts in the instance.
 */
export function Memberships({ userId, who }: { userId: string; who: string }) {
  const { ctx, orgId } = useScope();
  const { may, systemMember } = usePermissions();
  const queries = useQueryClient();
  const [offset, setOffset] = useState(0);
  const filters = [{ filter: { case: "user" as const, value: { userId } } }];
  const found = useQuery(PlatformMemberships.method.searchMemberships, {
    ctx,
    filters,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: MembershipFieldName.CREATION_DATE,
  });
  const system = useQuery(PlatformMemberships.method.searchMemberships, { ctx: SYSTEM_CTX, filters }, { enabled: systemMember && !orgId });
  // Every membership answer, the person's own permissions among them: a change may be to their own roles.
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformMemberships, cardinality: undefined }) });
  const rows = [...(offset === 0 && system.data ? system.data.result : []), ...(found.data?.result ?? [])];
  const orgs = useOrgNames(
    rows.flatMap((m) => (m.context?.type === OwnerType.ORG ? [m.context.id] : [])),
    may("org.read"),
  );
  const placeOf = (m: GetMembership) => {
    if (m.context?.type === OwnerType.SYSTEM) return { name: "System", phrase: "in the system" };
    if (m.context?.type !== OwnerType.ORG) return { name: "Instance", phrase: "in the instance" };
    const org = orgs.get(m.context.id) ?? m.context.id;
    return { name: `Organization ${org}`, phrase: `in the organization ${org}` };
  };
  const [mayRead, mayWrite, mayDelete] = [may("member.read"), may("member.write"), may("member.delete")];
  const rights = (m: GetMembership) => (m.context?.type === OwnerType.SYSTEM ? { mayWrite: systemMember, mayDelete: systemMember } : { mayWrite, mayDelete });
  return (
    <section aria-labelledby="memberships">
      <h2 id="memberships">Memberships</h2>
      <ApiError error={found.error ?? system.error} />
      <ResultTable
        label="Memberships"
        columns={["Where", "Roles", "Actions"]}
        rows={rows}
        rowId={(m) => `${m.context?.type ?? 0} ${m.context?.id ?? ""}`}
        pending={found.isPending}
        empty={orgId ? "No administrator roles in this organization." : "No administrator roles anywhere."}
        dependencies={[orgs, systemMember, mayRead, mayWrite, mayDelete]}
      >
        {(m) => (
          <>
            <Cell>
              <Place membership={m} name={placeOf(m).name} linked={mayRead} />
            </Cell>
            <Cell>
              <RoleBadges roles={m.roles} />
            </Cell>
            <Cell>
              <ContextActions membership={m} who={who} where={placeOf(m).phrase} {...rights(m)} onChanged={refresh} />
            </Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={found.data?.result.length ?? 0} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </section>
  );
}

/** A membership's context, linked to the Administrators page that lists it (the system's is chosen there, not linked). */
function Place({ membership: m, name, linked }: { membership: GetMembership; name: string; linked: boolean }) {
  if (!linked || m.context?.type === OwnerType.SYSTEM) return name;
  const org = m.context?.type === OwnerType.ORG ? m.context.id : undefined;
  return (
    <Link to="/administrators" search={org ? { org } : {}}>
      {name}
    </Link>
  );
}

/** One membership's actions, in its own context, with the roles of that context (fetched once the dialog opens). */
function ContextActions(props: { membership: GetMembership; who: string; where: string; mayWrite: boolean; mayDelete: boolean; onChanged(): Promise<void> }) {
  const { membership, who, where, mayWrite, mayDelete, onChanged } = props;
  const [open, setOpen] = useState(false);
  const ctx = ctxOf(membership.context);
  const available = useQuery(PlatformMemberships.method.listAvailableRoles, { ctx }, { enabled: open });
  const roles = (available.data?.roles ?? []).map((r) => ({ value: r.name, label: r.name }));
  return (
    <MembershipActions
      ctx={ctx}
      membership={membership}
      who={who}
      where={where}
      roles={roles}
      rolesError={available.error}
      mayWrite={mayWrite}
      mayDelete={mayDelete}
      onOpen={setOpen}
      onChanged={onChanged}
    />
  );
}

/** The names of the organizations on a page, where the person may read organizations. */
function useOrgNames(ids: string[], readable: boolean): Map<string, string> {
  const filters = [{ filter: { case: "inIds" as const, value: { ids } } }];
  const found = useQuery(PlatformOrganizations.method.searchOrganizations, { filters, query: { limit: ids.length } }, { enabled: readable && ids.length > 0 });
  return useMemo(() => new Map((found.data?.result ?? []).map((o) => [o.details?.id ?? "", o.name])), [found.data]);
}
