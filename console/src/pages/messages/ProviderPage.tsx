import { useNavigate } from "@tanstack/react-router";
import type { ReactNode } from "react";
import { Button } from "react-aria-components";
import { usePermissions } from "../../api/permissions";
import { ApiError } from "../../components/ApiError";
import { ConfirmAction } from "../../components/ConfirmAction";
import { SecretOnce } from "../../components/SecretOnce";
import { WRITE, type ProviderFamily } from "./families";
import { MessagesTabs } from "./MessagesTabs";
import type { ProviderRow } from "./provider-form";
import { SendTest } from "./SendTest";
import { useFamilyCall, useRefresh } from "./use-family";

/**
 * One provider of a family: what it is and whether it is the active one, making it so or not,
 * a test message, deleting it, and `children`, its settings.
 */
export function ProviderPage<P>(props: {
  family: ProviderFamily<unknown, unknown>;
  found: { data?: { provider?: P }; error: unknown };
  row(read: P): ProviderRow;
  children(read: P): ReactNode;
}) {
  const { family, found } = props;
  const { may } = usePermissions();
  const navigate = useNavigate();
  const refresh = useRefresh(family);
  const activate = useFamilyCall(family, family.activate);
  const deactivate = useFamilyCall(family, family.deactivate);
  const rekey = useFamilyCall(family, family.rekey);
  const remove = useFamilyCall(family, family.remove, false);
  const p = found.data?.provider;
  if (found.error) return <ApiError error={found.error} />;
  if (!p) return <p role="status">Loading…</p>;
  const { id, description, active, kind, where, endpoint } = props.row(p);
  const write = may(WRITE);
  const name = description || id;
  return (
    <>
      <div className="title">
        <h1>{name}</h1>
        <span className={active ? "badge ok" : "badge"}>{active ? "Active" : "Inactive"}</span>
      </div>
      <MessagesTabs />
      <dl className="facts">
        <dt>Sends through</dt>
        <dd>
          {kind} <code>{where}</code>
        </dd>
        <dt>ID</dt>
        <dd>
          <code>{id}</code>
        </dd>
      </dl>
      {write && (
        <>
          <p>
            {active
              ? `This is the instance's active ${family.noun}.`
              : `Activating it makes it the instance's ${family.noun} in place of the one active now, if any.`}
          </p>
          <div className="actions">
            {active ? (
              <Button onPress={() => deactivate.mutate(id)} isDisabled={deactivate.isPending}>
                Deactivate
              </Button>
            ) : (
              <Button onPress={() => activate.mutate(id)} isDisabled={activate.isPending}>
                Activate
              </Button>
            )}
            {endpoint && (
              <ConfirmAction trigger="New signing key…" title="Replace the signing key?" confirm="Replace" onConfirm={() => rekey.mutateAsync(id)}>
                <p>Messages are signed with the new key at once; the endpoint must check them with it from now on.</p>
              </ConfirmAction>
            )}
            <ConfirmAction
              trigger="Delete…"
              title={`Delete ${name}?`}
              confirm="Delete the provider"
              onConfirm={async () => {
                await remove.mutateAsync(id);
                // Away first: refreshed here, the page would fetch the provider it just deleted.
                await navigate({ to: family.list, search: (prev) => prev });
                await refresh();
              }}
            >
              <p>{active ? `It is the active ${family.noun}: none is active afterwards. ` : ""}This cannot be undone.</p>
            </ConfirmAction>
          </div>
          <ApiError error={activate.error ?? deactivate.error} />
          {rekey.data?.signingKey && <SecretOnce label="New signing key" value={rekey.data.signingKey} />}
          <SendTest family={family} id={id} />
        </>
      )}
      {props.children(p)}
    </>
  );
}
