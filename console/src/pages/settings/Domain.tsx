import { PlatformDomainSettings } from "../../../../gen/platform/settings/domain/v3alpha/domain_service_pb";
import { CheckboxInput } from "../../components/ChoiceInputs";
import { SettingsForm } from "../../components/SettingsForm";
import { useScope } from "../../scope";
import { InstanceWide } from "./InstanceWide";
import { SettingField } from "./SettingField";
import { SettingsPage } from "./SettingsPage";
import { flagSetting } from "./settings-form";
import { useSettings } from "./useSettings";

// Organizations share the instance's namespace of domains: only the instance sets its rules.
const SETTINGS = { validateOrgDomains: flagSetting("domain verification", { inOrgs: false }) };

/** How organizations may use their domains; the service has these for the system and instances only. */
export function Domain() {
  const { orgId } = useScope();
  const s = useSettings({
    resolve: PlatformDomainSettings.method.resolveDomainSettings,
    set: PlatformDomainSettings.method.setDomainSettings,
    settings: SETTINGS,
    permission: "settings.write",
    enabled: !orgId,
  });
  return (
    <SettingsPage title="Domain" loading={!orgId && s.loading} error={s.answer.error}>
      {orgId ? (
        <InstanceWide what="Domain settings" to="/settings/domain" />
      ) : (
        <SettingsForm title="Domain settings" mayWrite={s.mayWrite} onSubmit={s.onSubmit} {...s.save}>
          <SettingField line={s.setting("validateOrgDomains")}>
            <CheckboxInput
              control={s.form.control}
              name="validateOrgDomains"
              label="Organizations must verify a domain (DNS or HTTP) before it becomes primary or signs users in"
            />
          </SettingField>
        </SettingsForm>
      )}
    </SettingsPage>
  );
}
