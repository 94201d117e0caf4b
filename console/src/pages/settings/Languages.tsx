import { useQuery } from "@connectrpc/connect-query";
import { useMemo } from "react";
import { Controller } from "react-hook-form";
import type { Language } from "../../../../gen/platform/settings/language/v3alpha/language_pb";
import { PlatformLanguageSettings } from "../../../../gen/platform/settings/language/v3alpha/language_service_pb";
import { CheckboxesInput } from "../../components/ChoiceInputs";
import { SelectField } from "../../components/SelectField";
import { SettingsForm } from "../../components/SettingsForm";
import { useScope } from "../../scope";
import { SettingField } from "./SettingField";
import { SettingsPage } from "./SettingsPage";
import type { Setting } from "./settings-form";
import { useSettings } from "./useSettings";

const NAMES = new Intl.DisplayNames(["en"], { type: "language" });
const languageName = (key: string) => `${NAMES.of(key) ?? key} (${key})`;

/**
 * Language settings are Set differently from the others: a present empty key or list
 * resets. No restriction means every supported language, so that is what the page ticks.
 */
function languageSettings(supported: string[]) {
  const defaultLanguage: Setting<string, string | undefined> = {
    label: "default language",
    inOrgs: true,
    read: (key) => key ?? "",
    write: (key) => ({ key }),
    reset: { key: "" },
  };
  const restrictedLanguages: Setting<string[], Language[] | undefined> = {
    label: "offered languages",
    inOrgs: true,
    read: (languages) => (languages?.length ? languages.map((l) => l.key) : supported),
    write: (keys) => ({ languages: keys.map((key) => ({ key })) }),
    reset: { languages: [] },
  };
  return { defaultLanguage, restrictedLanguages };
}

/** Which languages texts and login pages are offered in, and the one used when none is asked for. */
export function Languages() {
  const { ctx } = useScope();
  // The same request as useSettings' (one answer, cached): its supported languages shape the form.
  const supported = useQuery(PlatformLanguageSettings.method.resolveLanguages, { ctx }).data?.settings?.supportedLanguages?.value.map((l) => l.key) ?? [];
  const key = supported.join();
  const settings = useMemo(() => languageSettings(key ? key.split(",") : []), [key]);
  const s = useSettings({
    resolve: PlatformLanguageSettings.method.resolveLanguages,
    set: PlatformLanguageSettings.method.setLanguages,
    settings,
    permission: "settings.write",
  });
  const { control } = s.form;
  return (
    <SettingsPage title="Languages" loading={s.loading} error={s.answer.error}>
      <SettingsForm title="Language settings" mayWrite={s.mayWrite} onSubmit={s.onSubmit} {...s.save}>
        <SettingField line={s.setting("restrictedLanguages")}>
          <CheckboxesInput
            control={control}
            name="restrictedLanguages"
            label="Offered languages"
            description="Texts and the login pages are offered in these only."
            options={supported.map((l) => ({ value: l, label: languageName(l) }))}
          />
        </SettingField>
        <SettingField line={s.setting("defaultLanguage")}>
          <Controller
            control={control}
            name="defaultLanguage"
            rules={{ validate: (language, all) => all.restrictedLanguages.includes(language) || "The default language must be one of the offered languages." }}
            render={({ field, fieldState }) => (
              <>
                <SelectField
                  label="Default language"
                  value={field.value}
                  options={supported.map((l) => ({ key: l, label: languageName(l) }))}
                  onChange={field.onChange}
                />
                {fieldState.error && (
                  <p className="error" role="alert">
                    {fieldState.error.message}
                  </p>
                )}
              </>
            )}
          />
        </SettingField>
      </SettingsForm>
    </SettingsPage>
  );
}
