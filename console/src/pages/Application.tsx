import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate, useParams } from "@tanstack/react-router";
import { useState } from "react";
import { APIAuthMethodType, AppState, OIDCAuthMethodType, type GetApp } from "../../../gen/platform/resources/app/v3alpha/app_pb";
import { PlatformApps } from "../../../gen/platform/resources/app/v3alpha/app_service_pb";
import { PlatformProjects } from "../../../gen/platform/resources/project/v3alpha/project_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import type { Option } from "../components/ChoiceInputs";
import { ConfirmAction } from "../components/ConfirmAction";
import { CopyButton } from "../components/CopyButton";
import { SecretOnce } from "../components/SecretOnce";
import { StateToggle } from "../components/StateToggle";
import { Keys } from "./application/Keys";
import { API_AUTH_METHODS, APP_TYPES, AUTH_METHODS } from "./application/oidc";
import { Settings } from "./application/Settings";
import { ResourceTabs, TABS } from "./events/ResourceTabs";

/**
 * One application: its client ID and how it authenticates; its state; a new secret (shown
 * once); deleting it; its redirect URIs, flows and token settings (OpenID Connect), or its
 * keys (private_key_jwt).
 */
export function Application() {
  const { appId } = useParams({ from: "/projects/$projectId/apps/$appId" });
  // A page of its own for each application: a secret shown once never stays for the next one.
  return <ApplicationPage key={appId} appId={appId} />;
}

function ApplicationPage({ appId }: { appId: string }) {
  const { may } = usePermissions();
  const queries = useQueryClient();
  const navigate = useNavigate();
  const found = useQuery(PlatformApps.method.getApp, { id: appId });
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformApps, cardinality: undefined }) });
  const deactivate = useMutation(PlatformApps.method.deactivateApp, { onSuccess: refresh });
  const reactivate = useMutation(PlatformApps.method.reactivateApp, { onSuccess: refresh });
  const regenerate = useMutation(PlatformApps.method.regenerateAppSecret);
  const remove = useMutation(PlatformApps.method.deleteApp);
  const [secret, setSecret] = useState<string | undefined>();
  const a = found.data?.app;
  if (found.error) return <ApiError error={found.error} />;
  if (!a) return <p role="status">Loading…</p>;
  const active = a.state === AppState.ACTIVE;
  const name = a.app?.name ?? "";
  const mayWrite = may("project.app.write");
  return (
    <>
      <div className="title">
        <h1>{name}</h1>
        <span className={active ? "badge ok" : "badge off"}>{active ? "Active" : "Inactive"}</span>
      </div>
      <ResourceTabs label="Application" tabs={TABS.app(a.projectId, appId)} />
      <Facts app={a} />
      <div className="actions">
        {mayWrite && (
          <StateToggle
            active={active}
            pending={deactivate.isPending || reactivate.isPending}
            onChange={(on) => (on ? reactivate : deactivate).mutate({ id: appId })}
          />
        )}
        {mayWrite && a.hasSecret && (
          <ConfirmAction
            trigger="New client secret…"
            title="Replace the client secret?"
            confirm="Replace the secret"
            onConfirm={async () => setSecret((await regenerate.mutateAsync({ id: appId })).clientSecret)}
          >
            <p>The current secret stops working at once: every client using it fails until it has the new one.</p>
          </ConfirmAction>
        )}
        {may("project.app.delete") && (
          <ConfirmAction
            trigger="Delete…"
            title={`Delete ${name}?`}
            confirm="Delete the application"
            onConfirm={async () => {
              await remove.mutateAsync({ id: appId });
              // Away first: refreshed here, the page would fetch the application it just deleted.
              await navigate({ to: "/projects/$projectId", params: { projectId: a.projectId }, search: (prev) => prev });
              await refresh();
            }}
          >
            <p>Its client stops working at once: nobody can sign in to it or use its tokens.</p>
          </ConfirmAction>
        )}
      </div>
      <ApiError error={deactivate.error ?? reactivate.error} />
      {secret && <SecretOnce label="New client secret" value={secret} />}
      <Settings app={a} mayWrite={mayWrite} onSaved={refresh} />
      {usesKeys(a) && <Keys appId={appId} mayWrite={mayWrite} />}
    </>
  );
}

const usesKeys = (a: GetApp) =>
  (a.app?.config.case === "oidc" && a.app.config.value.authMethodType === OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT) ||
  (a.app?.config.case === "api" && a.app.config.value.authMethodType === APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT);

function ProjectLink({ projectId }: { projectId: string }) {
  const project = useQuery(PlatformProjects.method.getProject, { id: projectId });
  return (
    <Link to="/projects/$projectId" params={{ projectId }} search={(prev) => prev}>
      {project.data?.project?.project?.name ?? projectId}
    </Link>
  );
}

/** What the application is and how its client authenticates; the client ID to copy. */
function Facts({ app }: { app: GetApp }) {
  const config = app.app?.config;
  const label = (options: Option[], value: number) => options.find((o) => o.value === String(value))?.label ?? "";
  const auth =
    config?.case === "oidc"
      ? label(AUTH_METHODS, config.value.authMethodType)
      : config?.case === "api"
        ? label(API_AUTH_METHODS, config.value.authMethodType)
        : "";
  return (
    <dl className="facts">
      <dt>Client ID</dt>
      <dd>
        <code>{app.clientId}</code> <CopyButton value={app.clientId} label="Copy the client ID" />
      </dd>
      <dt>Project</dt>
      <dd>
        <ProjectLink projectId={app.projectId} />
      </dd>
      <dt>Kind</dt>
      <dd>{config?.case === "api" ? "API" : "OpenID Connect"}</dd>
      {config?.case === "oidc" && (
        <>
          <dt>Where it runs</dt>
          <dd>{label(APP_TYPES, config.value.appType)}</dd>
        </>
      )}
      <dt>Authentication</dt>
      <dd>{auth}</dd>
    </dl>
  );
}
