import { PlatformFeatureSettings } from "../../../../gen/platform/settings/feature/v3alpha/feature_service_pb";
import { CheckboxInput } from "../../components/ChoiceInputs";
import { SettingsForm } from "../../components/SettingsForm";
import { SettingField } from "./SettingField";
import { SettingsPage } from "./SettingsPage";
import { flagSetting } from "./settings-form";
import { useSettings } from "./useSettings";

const INSTANCE_ONLY = { inOrgs: false };

// Where each flag may be set: src/domain/feature/catalog.ts (token exchange per organization of the client's project).
const SETTINGS = {
  multitenancyResourcesApi: flagSetting("resource APIs", INSTANCE_ONLY),
  multitenancySettings: flagSetting("settings APIs", INSTANCE_ONLY),
  actions: flagSetting("actions", INSTANCE_ONLY),
  tokenExchange: flagSetting("token exchange"),
};

type Flag = keyof typeof SETTINGS;

const FLAGS: { name: Flag; label: string }[] = [
  { name: "multitenancyResourcesApi", label: "Resource APIs (/resources/v3alpha; most of this console needs them)" },
  { name: "multitenancySettings", label: "Settings APIs (/settings/v3alpha; these pages but this one need them)" },
  { name: "actions", label: "Actions (targets and executions)" },
  { name: "tokenExchange", label: "Token exchange at the token endpoint (RFC 8693, experimental)" },
];

/** The service's feature flags in the context, each with where it comes from. */
export function Features() {
  const s = useSettings({
    resolve: PlatformFeatureSettings.method.resolveFeatures,
    set: PlatformFeatureSettings.method.setFeatures,
    settings: SETTINGS,
    permission: "feature.write",
  });
  return (
    <SettingsPage title="Features" loading={s.loading} error={s.answer.error}>
      <SettingsForm title="Feature flags" mayWrite={s.mayWrite} onSubmit={s.onSubmit} {...s.save}>
        {FLAGS.map((f) => (
          <SettingField key={f.name} line={s.setting(f.name)}>
            <CheckboxInput control={s.form.control} name={f.name} label={f.label} />
          </SettingField>
        ))}
      </SettingsForm>
    </SettingsPage>
  );
}
