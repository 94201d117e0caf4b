import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { Controller, useForm } from "react-hook-form";
import type { ContrastWarning } from "../../../../gen/platform/settings/branding/v3alpha/branding_pb";
import { PlatformBrandingSettings } from "../../../../gen/platform/settings/branding/v3alpha/branding_service_pb";
import { usePermissions } from "../../api/permissions";
import { ApiError } from "../../components/ApiError";
import { CheckboxInput } from "../../components/ChoiceInputs";
import { ColorInput } from "../../components/ColorInput";
import { Inherited } from "../../components/Inherited";
import { SelectField } from "../../components/SelectField";
import { SettingsForm } from "../../components/SettingsForm";
import { useScope } from "../../scope";
import { BrandingImages } from "./BrandingImages";
import { BrandingPreview } from "./BrandingPreview";
import { BRANDING, brandingChanges, brandingValues, FONTS, MODES, type BrandingValues } from "./branding-form";
import { settingReset } from "./settings-form";
import { SettingsTabs } from "./SettingsTabs";

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
  const { may } = usePermissions();
  const queries = useQueryClient();
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformBrandingSettings, cardinality: undefined }) });
  const resolved = useQuery(PlatformBrandingSettings.method.resolveBrandingSettings, { ctx });
  const settings = resolved.data?.settings;
  // A refetch (after a Reset) brings the values in effect into the fields not being edited.
  const form = useForm<BrandingValues>({ values: brandingValues(settings), resetOptions: { keepDirtyValues: true } });
  const save = useMutation(PlatformBrandingSettings.method.setBrandingSettings, {
    // What was saved is the form's own from now on (not dirty); the refetch then brings it as the API keeps it (colors in lower case).
    onSuccess: () => {
      form.reset(form.getValues());
      return refresh();
    },
  });
  const reset = useMutation(PlatformBrandingSettings.method.setBrandingSettings, { onSuccess: refresh });
  const values = form.watch();
  if (resolved.error) return <ApiError error={resolved.error} />;
  if (!settings) return <p role="status">Loading…</p>;
  const write = may("settings.write");
  const resetting = Object.keys(reset.variables?.settings ?? {})[0];
  /** A setting's field, where its value comes from, and the refusal of its Reset. */
  const setting = (name: keyof BrandingValues, field: ReactNode) => (
    <div key={name}>
      {field}
      <Inherited
        setting={BRANDING[name].label}
        owner={settings[name]?.owner}
        mayReset={write}
        pending={reset.isPending}
        onReset={() => {
          form.resetField(name);
          reset.mutate({ settings: settingReset(BRANDING, name), ctx });
        }}
      />
      {resetting === name && <ApiError error={reset.error} />}
    </div>
  );
  return (
    <>
      <div className="title">
        <h1>Branding</h1>
      </div>
      <SettingsTabs />
      <p className="muted">How the sign-in pages look {orgId ? "for this organization's users" : "in the instance, for every organization that sets nothing of its own"}.</p>
      <div className="branding">
        <div>
          <SettingsForm mayWrite={write} onSubmit={form.handleSubmit((v) => save.mutate({ settings: brandingChanges(v, settings), ctx }))} pending={save.isPending} error={save.error} saved={save.isSuccess && !form.formState.isDirty}>
            {MODES.map(({ mode, colors }) => (
              <fieldset className="plain" key={mode}>
                <legend>{mode}</legend>
                {colors.map((c) => setting(c.name, <ColorInput control={form.control} name={c.name} label={c.label} description={c.description} picker={`Pick the ${c.label.toLowerCase()} color (${mode.toLowerCase()})`} />))}
              </fieldset>
            ))}
            <fieldset className="plain">
              <legend>Options</legend>
              {setting("hideLoginNameSuffix", <CheckboxInput control={form.control} name="hideLoginNameSuffix" label="Show login names without “@” and the organization's domain" />)}
              {setting("disableWatermark", <CheckboxInput control={form.control} name="disableWatermark" label="Leave out the “Secured by” line under the form" />)}
              {setting("font", <Controller control={form.control} name="font" render={({ field }) => <SelectField label="Font" value={field.value} options={FONTS} onChange={field.onChange} />} />)}
            </fieldset>
          </SettingsForm>
          <ContrastWarnings warnings={save.data?.warnings ?? []} />
          <BrandingImages resolved={settings} mayWrite={write} ctx={ctx} onChange={refresh} />
        </div>
        {write && <BrandingPreview settings={brandingChanges(values, settings, true)} ctx={ctx} />}
      </div>
    </>
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
