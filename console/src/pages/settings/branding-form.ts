import type { MessageInitShape } from "@bufbuild/protobuf";
import { BrandingFont, type ResolvedBrandingSettings, type SetBrandingSettingsSchema } from "../../../../gen/platform/settings/branding/v3alpha/branding_pb";
import { setChanges } from "../../api/settings-changes";
import { isColor } from "../../components/ColorInput";

export type ColorName = "primaryColor" | "backgroundColor" | "warnColor" | "fontColor" | "primaryColorDark" | "backgroundColorDark" | "warnColorDark" | "fontColorDark";

/**
 * The branding form's values and the API's messages, both ways: the colors of each mode
 * (#rrggbb), the two options and the font stack (its enum number as text, the select's key).
 */
export type BrandingValues = Record<ColorName, string> & { hideLoginNameSuffix: boolean; disableWatermark: boolean; font: string };

export interface ColorSetting {
  name: ColorName;
  label: string;
  description: string;
}

/** The colors of one mode, as the proto describes them. */
const colors = (suffix: "" | "Dark"): ColorSetting[] => [
  { name: `primaryColor${suffix}`, label: "Primary", description: "Buttons and links; a button's label is black or white, whichever stands out more." },
  { name: `backgroundColor${suffix}`, label: "Background", description: "The page behind the sign-in card." },
  { name: `warnColor${suffix}`, label: "Warnings", description: "Errors and warnings, shown as text." },
  { name: `fontColor${suffix}`, label: "Text", description: "Text on the background." },
];

export const MODES = [
  { mode: "Light mode", colors: colors("") },
  { mode: "Dark mode", colors: colors("Dark") },
] as const;

export const FONTS = [
  { key: String(BrandingFont.SYSTEM_UI), label: "System interface (system-ui, Segoe UI, Roboto, …)" },
  { key: String(BrandingFont.HUMANIST), label: "Humanist sans-serif (Seravek, Gill Sans, Calibri, …)" },
  { key: String(BrandingFont.TRANSITIONAL), label: "Transitional serif (Charter, Cambria, Georgia, …)" },
  { key: String(BrandingFont.MONOSPACE), label: "Monospace (Menlo, Consolas, …)" },
];

const COLOR_NAMES = MODES.flatMap((m) => m.colors.map((c) => c.name));

/** The form's values: the branding in effect. */
export function brandingValues(r: ResolvedBrandingSettings | undefined): BrandingValues {
  const color = (name: ColorName) => r?.[name]?.value ?? "";
  return {
    ...(Object.fromEntries(COLOR_NAMES.map((name) => [name, color(name)])) as Record<ColorName, string>),
    hideLoginNameSuffix: r?.hideLoginNameSuffix?.value ?? false,
    disableWatermark: r?.disableWatermark?.value ?? false,
    font: String(r?.font?.value ?? BrandingFont.SYSTEM_UI),
  };
}

/**
 * The SetBrandingSettings of what the form changed. `draft`: for the preview of values still
 * being typed, where a color that is no color yet shows the one in effect instead of a
 * refusal.
 */
export function brandingChanges(values: BrandingValues, resolved: ResolvedBrandingSettings, draft = false): MessageInitShape<typeof SetBrandingSettingsSchema> {
  const inEffect = brandingValues(resolved);
  const typed = { ...values };
  for (const name of COLOR_NAMES) {
    // The API keeps colors in lower case: #ABCDEF where #abcdef is in effect changes nothing.
    typed[name] = draft && !isColor(values[name]) ? inEffect[name] : values[name].toLowerCase();
  }
  const { font, ...rest } = setChanges(typed, inEffect);
  return { ...rest, ...(font && { font: { change: { case: "set", value: Number(font.change.value) } } }) };
}
