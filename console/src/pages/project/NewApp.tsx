import { createConnectQueryKey, useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Button, Dialog, DialogTrigger, Heading, Modal } from "react-aria-components";
import { useForm } from "react-hook-form";
import type { APIAuthMethodType, OIDCAppType, OIDCAuthMethodType } from "../../../../gen/platform/resources/app/v3alpha/app_pb";
import { PlatformApps, type CreateAppResponse } from "../../../../gen/platform/resources/app/v3alpha/app_service_pb";
import { RadioInput } from "../../components/ChoiceInputs";
import { CopyButton } from "../../components/CopyButton";
import { FormFooter } from "../../components/FormFooter";
import { SecretOnce } from "../../components/SecretOnce";
import { TextInput } from "../../components/TextInput";
import { FlowFields } from "../application/FlowFields";
import { API_AUTH_METHODS, APP_TYPES, AUTH_METHODS, defaultsFor, flowConfig, type FlowValues } from "../application/oidc";

interface NewAppValues extends FlowValues {
  kind: "oidc" | "api";
  name: string;
  appType: string;
  authMethod: string;
  apiAuthMethod: string;
}

const KINDS = [
  { value: "oidc", label: "OpenID Connect: an application that signs people in" },
  { value: "api", label: "API: a resource server that checks tokens (introspection)" },
];

const initial = (): NewAppValues => {
  const web = APP_TYPES[0]!.value;
  const { authMethod, responseTypes, grantTypes } = defaultsFor(web);
  return {
    kind: "oidc",
    name: "",
    appType: web,
    authMethod,
    apiAuthMethod: API_AUTH_METHODS[0]!.value,
    redirectUris: "",
    postLogoutRedirectUris: "",
    responseTypes,
    grantTypes,
    devMode: false,
  };
};

/** A new application of a project; its client ID, and its secret shown this once. */
export function NewApp({ projectId }: { projectId: string }) {
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<CreateAppResponse | undefined>();
  return (
    <DialogTrigger
      isOpen={open}
      onOpenChange={(next) => {
        setOpen(next);
        // The secret goes with the dialog: the next one starts afresh.
        if (!next) setCreated(undefined);
      }}
    >
      <Button className="primary">New application</Button>
      <Modal className="react-aria-Modal large">
        <Dialog>{created ? <Created projectId={projectId} answer={created} /> : <NewAppForm projectId={projectId} onCreated={setCreated} />}</Dialog>
      </Modal>
    </DialogTrigger>
  );
}

function NewAppForm({ projectId, onCreated }: { projectId: string; onCreated(answer: CreateAppResponse): void }) {
  const queries = useQueryClient();
  const form = useForm<NewAppValues>({ defaultValues: initial() });
  const kind = form.watch("kind");
  const create = useMutation(PlatformApps.method.createApp, {
    onSuccess: async (answer) => {
      await queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformApps, cardinality: undefined }) });
      onCreated(answer);
    },
  });
  const submit = (v: NewAppValues) =>
    create.mutate({
      projectId,
      app: {
        name: v.name.trim(),
        config:
          v.kind === "api"
            ? { case: "api", value: { authMethodType: Number(v.apiAuthMethod) as APIAuthMethodType } }
            : {
                case: "oidc",
                value: { ...flowConfig(v), appType: Number(v.appType) as OIDCAppType, authMethodType: Number(v.authMethod) as OIDCAuthMethodType },
              },
      },
    });
  const chooseAppType = (appType: string) => {
    const defaults = defaultsFor(appType);
    form.setValue("authMethod", defaults.authMethod);
    form.setValue("responseTypes", defaults.responseTypes);
    form.setValue("grantTypes", defaults.grantTypes);
  };
  return (
    <>
      <Heading slot="title">New application</Heading>
      <form onSubmit={form.handleSubmit(submit)}>
        <TextInput
          control={form.control}
          name="name"
          label="Name"
          rules={{ required: "Give the application a name.", maxLength: { value: 200, message: "At most 200 characters." } }}
          autoFocus
        />
        <RadioInput control={form.control} name="kind" label="Kind" options={KINDS} />
        {kind === "oidc" ? (
          <>
            <RadioInput
              control={form.control}
              name="appType"
              label="Where it runs"
              description="Choosing one fills in the usual authentication and flows for it."
              options={APP_TYPES}
              onChoose={chooseAppType}
            />
            <RadioInput control={form.control} name="authMethod" label="Authentication at the token endpoint" options={AUTH_METHODS} />
            <FlowFields control={form.control} />
          </>
        ) : (
          <RadioInput control={form.control} name="apiAuthMethod" label="Authentication at the introspection endpoint" options={API_AUTH_METHODS} />
        )}
        <FormFooter submit="Create" pending={create.isPending} error={create.error} cancel />
      </form>
    </>
  );
}

function Created({ projectId, answer }: { projectId: string; answer: CreateAppResponse }) {
  return (
    <>
      <Heading slot="title">Application created</Heading>
      <dl className="facts">
        <dt>Client ID</dt>
        <dd>
          <code>{answer.clientId}</code> <CopyButton value={answer.clientId} label="Copy the client ID" />
        </dd>
      </dl>
      {answer.clientSecret ? (
        <SecretOnce label="Client secret" value={answer.clientSecret} />
      ) : (
        <p>This application has no secret: it is public, or it signs in with a key you add on its page.</p>
      )}
      <div className="actions">
        <Link className="button primary" to="/projects/$projectId/apps/$appId" params={{ projectId, appId: answer.details?.id ?? "" }} search={(prev) => prev}>
          Open the application
        </Link>
        <Button slot="close">Close</Button>
      </div>
    </>
  );
}
