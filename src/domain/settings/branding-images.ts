import { createHash } from "node:crypto";
import type { Tx } from "../../store/db.js";
import type { Editor } from "../../store/editor.js";
import type { ContextRef } from "../context.js";
import { BRANDING_SETTINGS, brandingAssetPath, imageUrlProperty, type BrandingImage } from "./branding.js";
import { putSettingsFile, removeSettingsFile } from "./files.js";
import { writeSettings, type SettingsDetails } from "./rows.js";

/**
 * A context's logo or icon. The image's URL is a branding property, written like any other
 * (an event `settings.branding.set` naming the new URL, whose path holds the content's hash;
 * the bytes are not in the event); the bytes are a file of the context (files.ts).
 */
export async function setBrandingImage(
  tx: Tx,
  creator: Editor,
  at: ContextRef,
  image: BrandingImage,
  file: { contentType: string; data: Uint8Array },
): Promise<SettingsDetails & { url: string }> {
  const hash = createHash("sha256").update(file.data).digest("base64url");
  const url = brandingAssetPath(at, image, hash);
  const details = await writeSettings(tx, creator, BRANDING_SETTINGS, at, { set: { [imageUrlProperty(image)]: url }, reset: [] });
  await putSettingsFile(tx, BRANDING_SETTINGS.name, at, image, { ...file, hash, changeDate: details.changeDate ?? new Date() });
  return { ...details, url };
}

/** Removes a context's own image: its parent's is in effect again. Nothing to remove changes nothing. */
export async function removeBrandingImage(tx: Tx, creator: Editor, at: ContextRef, image: BrandingImage): Promise<SettingsDetails> {
  const details = await writeSettings(tx, creator, BRANDING_SETTINGS, at, { set: {}, reset: [imageUrlProperty(image)] });
  await removeSettingsFile(tx, BRANDING_SETTINGS.name, at, image);
  return details;
}
