import type { MessageInitShape } from "@bufbuild/protobuf";
import { BrandingFont, type ResolvedBrandingSettings, type SetBrandingSettingsSchema } from "../../../../gen/platform/settings/branding/v3alpha/branding_pb";
import { isColor } from "../../components/ColorInput";
import { changedSettings, flagSetting, formValues, setOrReset, type Settings } from "./settings-form";

type ColorName =
  "primaryColor" | "backgroundColor" | "warnColor" | "fontColor" | "primaryColorDark" | "backgroundColorDark" | "warnColorDark" | "fontColorDark";

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

// The API keeps colors in lower case: #ABCDEF where #abcdef is in effect changes nothing.
const colorSetting = setOrReset<string, string | undefined, string>(
  (color) => color ?? "",
  (typed) => typed.toLowerCase(),
);
const fontSetting = setOrReset<string, BrandingFont | undefined, BrandingFont>((font) => String(font ?? BrandingFont.SYSTEM_UI), Number);

const COLORS = MODES.flatMap(({ mode, colors }) =>
  colors.map((c) => [c.name, colorSetting(`${c.label.toLowerCase()} color (${mode.toLowerCase()})`)] as const),
);

export const BRANDING: Settings<BrandingValues> = {
  ...(Object.fromEntries(COLORS) as Settings<Record<ColorName, string>>),
  hideLoginNameSuffix: flagSetting("login names without the domain"),
  disableWatermark: flagSetting("the watermark"),
  font: fontSetting("font"),
};

/** The form's values: the branding in effect. */
const brandingValues = (resolved: ResolvedBrandingSettings | undefined): BrandingValues => formValues(BRANDING, resolved ?? {});

/**
 * The SetBrandingSettings of what the form changed. `draft`: for the preview of values still
 * being typed, where a color that is no color yet shows the one in effect instead of a
 * refusal.
 */
export function brandingChanges(values: BrandingValues, resolved: ResolvedBrandingSettings, draft = false): MessageInitShape<typeof SetBrandingSettingsSchema> {
  const inEffect = brandingValues(resolved);
  const typed = { ...values };
  if (draft) for (const [name] of COLORS) if (!isColor(values[name])) typed[name] = inEffect[name];
  return changedSettings(BRANDING, typed, resolved);
}
