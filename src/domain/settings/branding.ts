import type { Db, Tx } from "../../store/db.js";
import type { ContextRef } from "../context.js";
import { invalidArgument } from "../errors.js";
import type { PropertyDefinition, Resolved, SettingsKind } from "./kind.js";
import { resolveSettings } from "./rows.js";

/**
 * How the login pages of an organization look: the branding settings in effect there
 * (resolved system → instance → organization) with each image as the URL it is served at.
 */
export interface Branding {
  primaryColor: string;
  backgroundColor: string;
  warnColor: string;
  fontColor: string;
  primaryColorDark: string;
  backgroundColorDark: string;
  warnColorDark: string;
  fontColorDark: string;
  /** Absolute paths on the service's own origin; absent when no context sets the image. */
  logoUrl?: string;
  logoDarkUrl?: string;
  iconUrl?: string;
  iconDarkUrl?: string;
  /** Login names shown without "@<org domain>". */
  hideLoginNameSuffix: boolean;
  disableWatermark: boolean;
  font: BrandingFont;
}

/** Font stacks of fonts the systems already have: the pages load no font files. */
export type BrandingFont = "system-ui" | "humanist" | "transitional" | "monospace";

/**
 * The system's values, where no context sets one: ZITADEL's defaults, but for the dark
 * primary color, lighter here (#4a90e2 for #2073c4), since links are drawn in it on the dark
 * background and ZITADEL's reaches only 3.6:1 there; every pair the contrast check names
 * passes WCAG AA.
 */
export const BUILT_IN_BRANDING: Branding = {
  primaryColor: "#5469d4",
  backgroundColor: "#fafafa",
  warnColor: "#cd3d56",
  fontColor: "#000000",
  primaryColorDark: "#4a90e2",
  backgroundColorDark: "#111827",
  warnColorDark: "#ff3b5b",
  fontColorDark: "#ffffff",
  hideLoginNameSuffix: false,
  disableWatermark: false,
  font: "system-ui",
};

/** The images a context may set; each is served at its own URL (branding-images.ts). */
const BRANDING_IMAGES = ["logo", "logo_dark", "icon", "icon_dark"] as const;
export type BrandingImage = (typeof BRANDING_IMAGES)[number];

const FONTS: readonly BrandingFont[] = ["system-ui", "humanist", "transitional", "monospace"];

/** Properties of the kind and the Branding fields they fill. */
const COLORS = {
  primary_color: "primaryColor",
  background_color: "backgroundColor",
  warn_color: "warnColor",
  font_color: "fontColor",
  primary_color_dark: "primaryColorDark",
  background_color_dark: "backgroundColorDark",
  warn_color_dark: "warnColorDark",
  font_color_dark: "fontColorDark",
} as const satisfies Record<string, keyof Branding>;
const FLAGS = { hide_login_name_suffix: "hideLoginNameSuffix", disable_watermark: "disableWatermark" } as const satisfies Record<string, keyof Branding>;
const IMAGE_URLS = { logo: "logoUrl", logo_dark: "logoDarkUrl", icon: "iconUrl", icon_dark: "iconDarkUrl" } as const satisfies Record<
  BrandingImage,
  keyof Branding
>;

/** The property holding where an image is served. */
export const imageUrlProperty = (image: BrandingImage) => `${image}_url`;

/**
 * Where branding images are served: `/assets/v3alpha/branding/<context>/<image>/<hash>`, the
 * context being `system`, `instance` (the Host's) or an organization's id. The content's
 * hash in the path lets caches keep an image for good: a new one has a new URL.
 */
export const BRANDING_ASSET_PREFIX = "/assets/v3alpha/branding/";
const ASSET_PATH = /^\/assets\/v3alpha\/branding\/([A-Za-z0-9_-]{1,100})\/(logo|logo_dark|icon|icon_dark)\/([A-Za-z0-9_-]{1,100})$/;

export function brandingAssetPath(at: ContextRef, image: BrandingImage, hash: string): string {
  // Organization ids are UUIDs: nothing in them needs escaping.
  const context = at.type === "org" ? at.orgId : at.type;
  return `${BRANDING_ASSET_PREFIX}${context}/${image}/${hash}`;
}

/** What an asset path names, the organization's context within the Host's instance; undefined for any other path. */
export function parseBrandingAssetPath(path: string, instanceId: string): { at: ContextRef; image: BrandingImage; hash: string } | undefined {
  const match = ASSET_PATH.exec(path);
  if (!match) return undefined;
  const [, context, image, hash] = match as unknown as [string, string, BrandingImage, string];
  const at: ContextRef =
    context === "system" ? { type: "system" } : context === "instance" ? { type: "instance", instanceId } : { type: "org", instanceId, orgId: context };
  return { at, image, hash };
}

const EVERYWHERE = new Set(["system", "instance", "org"] as const);

function colorProperty(name: string, builtIn: string): PropertyDefinition {
  return {
    levels: EVERYWHERE,
    builtIn,
    check: (v) => {
      // Lower case only: the API lowercases what it is given (rpc/services/settings/codec.ts).
      if (typeof v !== "string" || !/^#[0-9a-f]{6}$/.test(v)) throw invalidArgument(`${name}: "${String(v)}" is not a color #rrggbb`);
    },
  };
}

const properties: Record<string, PropertyDefinition> = {
  ...Object.fromEntries(Object.entries(COLORS).map(([name, field]) => [name, colorProperty(name, BUILT_IN_BRANDING[field])])),
  ...Object.fromEntries(
    Object.entries(FLAGS).map(([name, field]) => [
      name,
      {
        levels: EVERYWHERE,
        builtIn: BUILT_IN_BRANDING[field],
        check: (v: unknown) => {
          if (typeof v !== "boolean") throw invalidArgument(`${name} is true or false`);
        },
      },
    ]),
  ),
  font: {
    levels: EVERYWHERE,
    builtIn: BUILT_IN_BRANDING.font,
    check: (v) => {
      if (!FONTS.includes(v as BrandingFont)) throw invalidArgument(`font is one of ${FONTS.join(", ")}`);
    },
  },
  // Written by SetBrandingImage and RemoveBrandingImage only; "" where no context has an image.
  ...Object.fromEntries(
    BRANDING_IMAGES.map((image) => [
      imageUrlProperty(image),
      {
        levels: EVERYWHERE,
        builtIn: "",
        check: (v: unknown) => {
          if (typeof v !== "string" || !ASSET_PATH.test(v)) throw invalidArgument(`${imageUrlProperty(image)} is the path of an uploaded image`);
        },
      },
    ]),
  ),
};

/**
 * How the login pages look. Every property may be set in the system, an instance and an
 * organization; an image's URL is inherited like a color, so an organization without a
 * logo shows its instance's.
 */
export const BRANDING_SETTINGS: SettingsKind = { name: "branding", properties };

/** The Branding of resolved branding settings. */
export function brandingFromResolved(resolved: Resolved): Branding {
  const value = (name: string) => resolved[name]!.value;
  const branding = { ...BUILT_IN_BRANDING };
  for (const [name, field] of Object.entries(COLORS)) branding[field] = String(value(name));
  for (const [name, field] of Object.entries(FLAGS)) branding[field] = value(name) === true;
  branding.font = value("font") as BrandingFont;
  for (const image of BRANDING_IMAGES) {
    const url = String(value(imageUrlProperty(image)));
    if (url) branding[IMAGE_URLS[image]] = url;
  }
  return branding;
}

/**
 * The branding of an organization's login pages (org → instance → system → built-in), or of
 * the instance's when no organization is named. One query of the settings rows along the
 * context: the login pages call it for every page.
 */
export async function resolveBranding(db: Db | Tx, at: { instanceId: string; orgId?: string }): Promise<Branding> {
  const context: ContextRef = at.orgId ? { type: "org", instanceId: at.instanceId, orgId: at.orgId } : { type: "instance", instanceId: at.instanceId };
  return brandingFromResolved((await resolveSettings(db, BRANDING_SETTINGS, context)).resolved);
}
