import { useMutation } from "@connectrpc/connect-query";
import { useForm } from "react-hook-form";
import { OIDCTokenType, type GetApp, type OIDCConfig } from "../../../../gen/platform/resources/app/v3alpha/app_pb";
import { PlatformApps } from "../../../../gen/platform/resources/app/v3alpha/app_service_pb";
import { CheckboxInput, RadioInput } from "../../components/ChoiceInputs";
import { SettingsForm } from "../../components/SettingsForm";
import { TextInput } from "../../components/TextInput";
import { FlowFields } from "./FlowFields";
import { TOKEN_TYPES, flowConfig, type FlowValues } from "./oidc";

interface SettingsValues extends FlowValues {
  name: string;
  accessTokenType: string;
  accessTokenRoleAssertion: boolean;
  idTokenRoleAssertion: boolean;
  idTokenUserinfoAssertion: boolean;
  clockSkew: string;
}

/** An application's name and, for an OpenID Connect client, its redirect URIs, flows and token settings. */
export function Settings({ app, mayWrite, onSaved }: { app: GetApp; mayWrite: boolean; onSaved(): Promise<void> }) {
  const config = app.app?.config.case === "oidc" ? app.app.config.value : undefined;
  const form = useForm<SettingsValues>({ values: valuesOf(app.app?.name ?? "", config) });
  const patch = useMutation(PlatformApps.method.patchApp, { onSuccess: onSaved });
  const save = (v: SettingsValues) => patch.mutate({ id: app.details?.id ?? "", app: { name: v.name.trim(), ...(config && { oidc: oidcPatch(v) }) } });
  return (
    <SettingsForm
      mayWrite={mayWrite}
      onSubmit={form.handleSubmit(save)}
      pending={patch.isPending}
      error={patch.error}
      saved={patch.isSuccess && !form.formState.isDirty}
    >
      <TextInput
        control={form.control}
        name="name"
        label="Name"
        rules={{ required: "Give the application a name.", maxLength: { value: 200, message: "At most 200 characters." } }}
      />
      {config && (
        <>
          <FlowFields control={form.control} />
          <RadioInput control={form.control} name="accessTokenType" label="Access tokens" options={TOKEN_TYPES} />
          <CheckboxInput control={form.control} name="accessTokenRoleAssertion" label="Access tokens (JWT) carry the user's roles of the project" />
          <CheckboxInput control={form.control} name="idTokenRoleAssertion" label="ID tokens carry the user's roles of the project" />
          <CheckboxInput control={form.control} name="idTokenUserinfoAssertion" label="ID tokens carry the profile, email and phone claims" />
          <TextInput
            control={form.control}
            name="clockSkew"
            label="Clock skew (seconds)"
            description="0 to 5: added to token lifetimes for clients whose clock runs behind."
            rules={{
              required: "Give a number of seconds, 0 for none.",
              validate: (s) => (/^\d+(\.\d{1,3})?$/.test(String(s).trim()) && Number(s) <= 5) || "A number from 0 to 5, at most three decimals.",
            }}
          />
        </>
      )}
    </SettingsForm>
  );
}

function valuesOf(name: string, c: OIDCConfig | undefined): SettingsValues {
  const skew = c?.clockSkew ? Number(c.clockSkew.seconds) + c.clockSkew.nanos / 1e9 : 0;
  return {
    name,
    redirectUris: (c?.redirectUris ?? []).join("\n"),
    postLogoutRedirectUris: (c?.postLogoutRedirectUris ?? []).join("\n"),
    responseTypes: (c?.responseTypes ?? []).map(String),
    grantTypes: (c?.grantTypes ?? []).map(String),
    devMode: c?.devMode ?? false,
    accessTokenType: String(c?.accessTokenType ?? OIDCTokenType.OIDC_TOKEN_TYPE_BEARER),
    accessTokenRoleAssertion: c?.accessTokenRoleAssertion ?? false,
    idTokenRoleAssertion: c?.idTokenRoleAssertion ?? false,
    idTokenUserinfoAssertion: c?.idTokenUserinfoAssertion ?? false,
    clockSkew: String(skew),
  };
}

/** Every setting of the form, lists whole (a patch's list replaces the stored one). */
function oidcPatch(v: SettingsValues) {
  const flow = flowConfig(v);
  const skew = Number(v.clockSkew);
  return {
    redirectUris: { values: flow.redirectUris },
    postLogoutRedirectUris: { values: flow.postLogoutRedirectUris },
    responseTypes: { values: flow.responseTypes },
    grantTypes: { values: flow.grantTypes },
    devMode: flow.devMode,
    accessTokenType: Number(v.accessTokenType) as OIDCTokenType,
    accessTokenRoleAssertion: v.accessTokenRoleAssertion,
    idTokenRoleAssertion: v.idTokenRoleAssertion,
    idTokenUserinfoAssertion: v.idTokenUserinfoAssertion,
    clockSkew: { seconds: BigInt(Math.floor(skew)), nanos: Math.round((skew % 1) * 1e9) },
  };
}
