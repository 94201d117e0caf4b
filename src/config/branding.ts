import { integer } from "./env.js";

/** Branding settings (src/domain/settings/branding.ts). */
export interface BrandingLimits {
  /** Larger logos and icons are InvalidArgument; the request body limit applies too. */
  maxImageBytes: number;
}

export function brandingSettings(env: NodeJS.ProcessEnv): { branding: BrandingLimits } {
  return { branding: { maxImageBytes: integer(env, "PLATFORM_BRANDING_MAX_IMAGE_BYTES", 512 * 1024, 1024, 64 * 1024 * 1024) } };
}
