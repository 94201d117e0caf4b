/*
 * The images a context may upload as its logo or icon, checked in the browser as the API
 * checks them (src/images/check-image.ts), so a wrong file is named before it is sent. The
 * API checks the content too, and its limit is configurable: its answer has the last word.
 */

export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/svg+xml"];

/** PLATFORM_BRANDING_MAX_IMAGE_BYTES' default. */
export const MAX_IMAGE_BYTES = 512 * 1024;

/** What is wrong with a chosen file, in words; undefined when the API should take it. */
export function imageProblem(file: { name: string; type: string; size: number }): string | undefined {
  if (!IMAGE_TYPES.includes(file.type))
    return `${file.name} is ${file.type ? `of type ${file.type}` : "of no known type"}: choose a PNG, JPEG, WebP or SVG image.`;
  if (file.size === 0) return `${file.name} is empty.`;
  if (file.size > MAX_IMAGE_BYTES)
    return `${file.name} has ${file.size.toLocaleString("en")} bytes: at most ${MAX_IMAGE_BYTES.toLocaleString("en")} (512 KiB) are taken.`;
  return undefined;
}
