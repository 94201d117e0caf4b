import { useMutation } from "@connectrpc/connect-query";
import type { GetMembership } from "../../../../gen/platform/resources/membership/v3alpha/membership_pb";
import { PlatformMemberships } from "../../../../gen/platform/resources/membership/v3alpha/membership_service_pb";
import { ChangeRolesDialog } from "../../components/ChangeRolesDialog";
import type { Option } from "../../components/ChoiceInputs";
import { ConfirmAction } from "../../components/ConfirmAction";
import type { Ctx } from "./context";

/**
 * What may be done to one membership in its context (`ctx`): its roles replaced, or it
 * removed after saying what `who` loses. `where` names the context (a page of one context leaves it out).
 */
export function MembershipActions(props: {
  ctx: Ctx;
  membership: GetMembership;
  who: string;
  where?: string;
  roles: Option[];
  rolesError?: unknown;
  mayWrite: boolean;
  mayDelete: boolean;
  onOpen?(open: boolean): void;
  onChanged(): Promise<void>;
}) {
  const { ctx, membership: m, who, where, roles, rolesError, mayWrite, mayDelete, onOpen, onChanged } = props;
  const at = where ? ` ${where}` : "";
  const patch = useMutation(PlatformMemberships.method.patchMembership);
  const remove = useMutation(PlatformMemberships.method.deleteMembership, { onSuccess: onChanged });
  return (
    <div className="row-actions">
      {mayWrite && (
        <ChangeRolesDialog
          title={`Roles of ${who}${at}`}
          current={m.roles}
          options={roles}
          error={rolesError}
          onOpenChange={onOpen}
          onSave={async (next) => {
            await patch.mutateAsync({ ctx, userId: m.userId, membership: { roles: next } });
            await onChanged();
          }}
        />
      )}
      {mayDelete && (
        <ConfirmAction trigger="Remove…" title={`Remove ${who}${at}?`} confirm="Remove" onConfirm={() => remove.mutateAsync({ ctx, userId: m.userId })}>
          <p>
            {who} loses {m.roles.join(", ")} {where ?? "here"} at once, and with them what those roles allow.
          </p>
        </ConfirmAction>
      )}
    </div>
  );
}
