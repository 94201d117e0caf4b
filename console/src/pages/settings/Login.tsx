import { MultiFactorType, PasswordlessType, SecondFactorType } from "../../../../gen/platform/settings/login/v3alpha/login_pb";
import { PlatformLoginSettings } from "../../../../gen/platform/settings/login/v3alpha/login_service_pb";
import { CheckboxesInput, CheckboxInput } from "../../components/ChoiceInputs";
import { SettingsForm } from "../../components/SettingsForm";
import { TextInput } from "../../components/TextInput";
import { DurationInput } from "./DurationInput";
import type { DurationValue } from "./duration";
import { SettingField } from "./SettingField";
import { SettingsPage } from "./SettingsPage";
import { durationSetting, flagSetting, setOrReset, textSetting, typesSetting, type Settings } from "./settings-form";
import { useSettings } from "./useSettings";

/** The API's bound of every login lifetime: a year. */
const MAX_HOURS = 8760;

interface LoginValues {
  allowRegister: boolean;
  allowUsernamePassword: boolean;
  allowExternalIdp: boolean;
  requireVerifiedEmail: boolean;
  forceMfa: boolean;
  forceMfaLocalOnly: boolean;
  passwordlessType: boolean;
  secondFactors: string[];
  multiFactors: string[];
  passwordCheckLifetime: DurationValue;
  externalLoginCheckLifetime: DurationValue;
  secondFactorCheckLifetime: DurationValue;
  multiFactorCheckLifetime: DurationValue;
  mfaInitSkipLifetime: DurationValue;
  loginUiUrl: string;
}

/** The settings the page shows as a check box. */
type Flag = { [K in keyof LoginValues]: LoginValues[K] extends boolean ? K : never }[keyof LoginValues];

/** Passkeys alone: a yes or no on the page, ALLOWED or NOT_ALLOWED in the API. */
const passwordlessSetting = setOrReset<boolean, PasswordlessType | undefined, PasswordlessType>(
  (type) => type !== PasswordlessType.NOT_ALLOWED,
  (allowed) => (allowed ? PasswordlessType.ALLOWED : PasswordlessType.NOT_ALLOWED),
);

const SETTINGS: Settings<LoginValues> = {
  allowRegister: flagSetting("self-registration"),
  allowUsernamePassword: flagSetting("sign-in with a password"),
  allowExternalIdp: flagSetting("external identity providers"),
  requireVerifiedEmail: flagSetting("verified email address"),
  forceMfa: flagSetting("forced second factor"),
  forceMfaLocalOnly: flagSetting("second factor for passwords only"),
  passwordlessType: passwordlessSetting("passkeys alone"),
  secondFactors: typesSetting("second factors"),
  multiFactors: typesSetting("multi-factor authenticators"),
  passwordCheckLifetime: durationSetting("password check lifetime"),
  externalLoginCheckLifetime: durationSetting("external login check lifetime"),
  secondFactorCheckLifetime: durationSetting("second factor check lifetime"),
  multiFactorCheckLifetime: durationSetting("passkey check lifetime"),
  mfaInitSkipLifetime: durationSetting("second factor set-up postponement"),
  // An organization's id is anyone's to put into an authorization request: the instance decides.
  loginUiUrl: textSetting("login UI URL", { inOrgs: false }),
};

const SECOND_FACTORS = [
  { value: String(SecondFactorType.TOTP), label: "Authenticator app (TOTP)" },
  { value: String(SecondFactorType.U2F), label: "Security key" },
  { value: String(SecondFactorType.OTP_EMAIL), label: "Code by email" },
  { value: String(SecondFactorType.OTP_SMS), label: "Code by SMS" },
];
const MULTI_FACTORS = [{ value: String(MultiFactorType.PASSKEY), label: "Passkey (after a password, counts as a second factor)" }];

/** Empty (the built-in pages), or an absolute https address (http only on this machine) without a fragment. */
function checkLoginUiUrl(typed: string): true | string {
  const value = typed.trim();
  if (!value) return true;
  try {
    const url = new URL(value);
    const local = url.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
    if ((url.protocol === "https:" || local) && !url.hash) return true;
  } catch {
    // Not a URL at all: said below.
  }
  return "An absolute https address without a #fragment (http only on localhost), or nothing.";
}

/** What the login pages offer and ask for, and how long each check counts for single sign-on. */
export function Login() {
  const s = useSettings({
    resolve: PlatformLoginSettings.method.resolveLoginSettings,
    set: PlatformLoginSettings.method.setLoginSettings,
    settings: SETTINGS,
    permission: "settings.write",
  });
  const { control } = s.form;
  const flag = (name: Flag, label: string) => (
    <SettingField line={s.setting(name)}>
      <CheckboxInput control={control} name={name} label={label} />
    </SettingField>
  );
  const duration = (name: keyof LoginValues & `${string}Lifetime`, label: string, description: string) => (
    <SettingField line={s.setting(name)}>
      <DurationInput control={control} name={name} label={label} description={description} maxHours={MAX_HOURS} />
    </SettingField>
  );
  return (
    <SettingsPage title="Login" loading={s.loading} error={s.answer.error}>
      <SettingsForm title="Login settings" mayWrite={s.mayWrite} onSubmit={s.onSubmit} {...s.save}>
        <h3>Signing in</h3>
        {flag("allowUsernamePassword", "People may sign in with their login name and password")}
        {flag("allowExternalIdp", "The login pages offer external identity providers")}
        {flag("passwordlessType", "A passkey signs in by itself, without a password")}
        {flag("allowRegister", "People may register themselves")}
        {flag("requireVerifiedEmail", "Signing in needs a verified email address (a code is sent first)")}
        <h3>Second factors</h3>
        {flag("forceMfa", "Every sign-in needs a second factor")}
        {flag("forceMfaLocalOnly", "Only sign-ins with a password need it (not those through an external identity provider)")}
        <SettingField line={s.setting("secondFactors")}>
          <CheckboxesInput control={control} name="secondFactors" label="Second factors people may use" options={SECOND_FACTORS} />
        </SettingField>
        <SettingField line={s.setting("multiFactors")}>
          <CheckboxesInput control={control} name="multiFactors" label="Two factors in one" options={MULTI_FACTORS} />
        </SettingField>
        {duration("mfaInitSkipLifetime", "Setting up a forced second factor may be put off for", "0: it cannot be skipped.")}
        <h3>Single sign-on</h3>
        {duration("passwordCheckLifetime", "A checked password counts for", "After that, the next authorization signs in again.")}
        {duration("externalLoginCheckLifetime", "A sign-in through an external identity provider counts for", "As a password.")}
        {duration("secondFactorCheckLifetime", "A checked second factor counts for", "After that, it is asked for again.")}
        {duration("multiFactorCheckLifetime", "A checked passkey counts for", "Alone or after a password.")}
        <h3>Login UI</h3>
        <SettingField line={s.setting("loginUiUrl")}>
          <TextInput
            control={control}
            name="loginUiUrl"
            type="url"
            label="Login UI URL"
            description="Authorization requests go there instead of the built-in pages. Empty: the built-in pages."
            rules={{ validate: (v) => checkLoginUiUrl(String(v)) }}
          />
        </SettingField>
      </SettingsForm>
    </SettingsPage>
  );
}
