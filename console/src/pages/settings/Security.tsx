import { PlatformLoginSettings } from "../../../../gen/platform/settings/login/v3alpha/login_service_pb";
import { SettingsForm } from "../../components/SettingsForm";
import { TextInput } from "../../components/TextInput";
import { PasswordRules } from "./PasswordRules";
import { SettingField } from "./SettingField";
import { SettingsPage } from "./SettingsPage";
import { countSetting } from "./settings-form";
import { useSettings } from "./useSettings";

/** The API's bound of the lockout threshold (domain/settings/login.ts). */
const MAX_ATTEMPTS = 1000;

const SETTINGS = { maxPasswordAttempts: countSetting("lockout") };

/** When a user is locked (a login setting), and what a new password must be (the instance's). */
export function Security() {
  const s = useSettings({
    resolve: PlatformLoginSettings.method.resolveLoginSettings,
    set: PlatformLoginSettings.method.setLoginSettings,
    settings: SETTINGS,
    permission: "settings.write",
  });
  return (
    <SettingsPage title="Lockout and passwords" loading={s.loading} error={s.answer.error}>
      <SettingsForm title="Lockout" mayWrite={s.mayWrite} onSubmit={s.onSubmit} {...s.save}>
        <SettingField line={s.setting("maxPasswordAttempts")}>
          <TextInput
            control={s.form.control}
            name="maxPasswordAttempts"
            label="Lock a user after this many wrong passwords in a row"
            description={`0: never. At most ${MAX_ATTEMPTS}.`}
            rules={{
              pattern: { value: /^\s*\d{1,4}\s*$/, message: "A whole number, 0 or more." },
              validate: (v) => Number(v) <= MAX_ATTEMPTS || `At most ${MAX_ATTEMPTS}.`,
            }}
          />
        </SettingField>
      </SettingsForm>
      <PasswordRules />
    </SettingsPage>
  );
}
