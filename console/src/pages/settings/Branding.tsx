import type { ReactNode } from "react";
import { Controller } from "react-hook-form";
import type { ContrastWarning } from "../../../../gen/platform/settings/branding/v3alpha/branding_pb";
import { PlatformBrandingSettings } from "../../../../gen/platform/settings/branding/v3alpha/branding_service_pb";
import { CheckboxInput } from "../../components/ChoiceInputs";
import { ColorInput } from "../../components/ColorInput";
import { SelectField } from "../../components/SelectField";
import { SettingsForm } from "../../components/SettingsForm";
import { useScope } from "../../scope";
import { BrandingImages } from "./BrandingImages";
import { BrandingPreview } from "./BrandingPreview";
import { BRANDING, brandingChanges, FONTS, MODES, type BrandingValues } from "./branding-form";
import { SettingField } from "./SettingField";
import { SettingsPage } from "./SettingsPage";
import { useSettings } from "./useSettings";

/** The look of the sign-in pages in the chosen context; a form per context, so no unsaved change follows a switch. */
export function Branding() {
  const { orgId } = useScope();
  return <BrandingSettings key={orgId ?? "instance"} />;
}

/**
 * The branding in effect, each value with where it comes from (Reset takes this context's
 * own value away); saving sends only what was changed. Beside it the sign-in page as the
 * unsaved values would draw it.
 */
function BrandingSettings() {
  const { ctx, orgId } = useScope();
  const s = useSettings({
    resolve: PlatformBrandingSettings.method.resolveBrandingSettings,
    set: PlatformBrandingSettings.method.setBrandingSettings,
    settings: BRANDING,
    permission: "settings.write",
  });
  const settings = s.answer.data?.settings;
  const { control } = s.form;
  const values = s.form.watch();
  const setting = (name: keyof BrandingValues, field: ReactNode) => (
    <SettingField key={name} line={s.setting(name)}>
      {field}
    </SettingField>
  );
  return (
    <SettingsPage title="Branding" loading={s.loading} error={s.answer.error}>
      <p className="muted">
        How the sign-in pages look {orgId ? "for this organization's users" : "in the instance, for every organization that sets nothing of its own"}.
      </p>
      {settings && (
        <div className="branding">
          <div>
            <SettingsForm mayWrite={s.mayWrite} onSubmit={s.onSubmit} {...s.save}>
              {MODES.map(({ mode, colors }) => (
                <fieldset className="plain" key={mode}>
                  <legend>{mode}</legend>
                  {colors.map((c) =>
                    setting(
                      c.name,
                      <ColorInput
                        control={control}
                        name={c.name}
                        label={c.label}
                        description={c.description}
                        picker={`Pick the ${c.label.toLowerCase()} color (${mode.toLowerCase()})`}
                      />,
                    ),
                  )}
                </fieldset>
              ))}
              <fieldset className="plain">
                <legend>Options</legend>
                {setting(
                  "hideLoginNameSuffix",
                  <CheckboxInput control={control} name="hideLoginNameSuffix" label="Show login names without “@” and the organization's domain" />,
                )}
                {setting(
                  "disableWatermark",
                  <CheckboxInput control={control} name="disableWatermark" label="Leave out the “Secured by” line under the form" />,
                )}
                {setting(
                  "font",
                  <Controller
                    control={control}
                    name="font"
                    render={({ field }) => <SelectField label="Font" value={field.value} options={FONTS} onChange={field.onChange} />}
                  />,
                )}
              </fieldset>
            </SettingsForm>
            <ContrastWarnings warnings={s.saved?.warnings ?? []} />
            <BrandingImages resolved={settings} mayWrite={s.mayWrite} ctx={ctx} onChange={s.refresh} />
          </div>
          {s.mayWrite && <BrandingPreview settings={brandingChanges(values, settings, true)} ctx={ctx} />}
        </div>
      )}
    </SettingsPage>
  );
}

/** What the API said of the saved colors: pairs that fall below WCAG AA (saved all the same; the pages adjust them). */
function ContrastWarnings({ warnings }: { warnings: ContrastWarning[] }) {
  if (warnings.length === 0) return null;
  return (
    <div className="panel">
      <h3>Saved, with too little contrast</h3>
      <ul>
        {warnings.map((w) => (
          <li key={`${w.foreground}/${w.background}`}>{w.message}</li>
        ))}
      </ul>
    </div>
  );
}
