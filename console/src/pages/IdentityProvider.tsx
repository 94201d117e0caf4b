import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate, useParams } from "@tanstack/react-router";
import { PlatformIdentityProviders } from "../../../gen/platform/resources/idp/v3alpha/idp_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { ConfirmAction } from "../components/ConfirmAction";
import { useScope } from "../scope";
import { ResourceTabs, TABS } from "./events/ResourceTabs";
import { CallbackUrl, SamlUrls } from "./idp/CallbackUrl";
import { OwnerName } from "./idp/OwnerName";
import { IdpSettings } from "./idp/Settings";
import { StateBadge } from "./idp/StateBadge";
import { StatePolicySection } from "./idp/StatePolicy";
import { KINDS, kindOf, typeLabel } from "./idp/kinds";

/**
 * One identity provider as the context the console acts in sees it: its state there and that
 * context's policy; where it is defined, also its settings and deleting it.
 */
export function IdentityProvider() {
  const { idpId } = useParams({ from: "/identity-providers/$idpId" });
  const { may } = usePermissions();
  const { ctx } = useScope();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformIdentityProviders, cardinality: undefined }) });
  const found = useQuery(PlatformIdentityProviders.method.getIDP, { id: idpId, ctx });
  const remove = useMutation(PlatformIdentityProviders.method.deleteIDP);
  const g = found.data?.idp;
  if (found.error) return <ApiError error={found.error} />;
  if (!g) return <p role="status">Loading…</p>;
  const kind = kindOf(g.type);
  const name = g.idp?.name ?? idpId;
  // Asked from a context that reuses it, the answer names that context's parent: only the state policy may change there.
  const definedHere = !g.parent;
  const write = may("idp.write");
  return (
    <>
      <div className="title">
        <h1>{name}</h1>
        <StateBadge state={g.state} />
      </div>
      <ResourceTabs label="Identity provider" tabs={TABS.idp(idpId)} />
      <dl className="facts">
        <dt>Type</dt>
        <dd>{typeLabel(g.type)}</dd>
        <dt>Defined in</dt>
        <dd>
          <OwnerName owner={g.details?.resourceOwner} />
        </dd>
        <dt>ID</dt>
        <dd>
          <code>{idpId}</code>
        </dd>
        {/* A directory is asked by the service itself: nothing comes back. A SAML provider answers at its own ACS. */}
        {(!kind || KINDS[kind].protocol === "oauth") && <CallbackUrl />}
        {kind && KINDS[kind].protocol === "saml" && <SamlUrls idpId={idpId} />}
      </dl>
      {definedHere && may("idp.delete") && (
        <div className="actions">
          <ConfirmAction
            trigger="Delete…"
            title={`Delete ${name}?`}
            confirm="Delete the provider"
            onConfirm={async () => {
              await remove.mutateAsync({ id: idpId, ctx });
              // Away first: refreshed here, the page would fetch the provider it just deleted.
              await navigate({ to: "/identity-providers", search: (prev) => prev });
              await refresh();
            }}
          >
            <p>Its login button goes from every context that uses it, and every account's link to it goes too. This cannot be undone.</p>
          </ConfirmAction>
        </div>
      )}
      {kind && <StatePolicySection idpId={idpId} got={g} patch={KINDS[kind].patch} mayWrite={write} onSaved={refresh} />}
      {!definedHere && <p className="hint">Its settings are made where it is defined; here they are read-only.</p>}
      {kind && <IdpSettings idpId={idpId} kind={kind} mayWrite={write && definedHere} onSaved={refresh} />}
    </>
  );
}
