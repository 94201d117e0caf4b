import { fileTypeFromBuffer } from "file-type";
import { invalidArgument } from "../domain/errors.js";
import { sanitizeSvg } from "./sanitize-svg.js";

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/svg+xml"] as const;
type ImageType = (typeof IMAGE_TYPES)[number];

export interface CheckedImage {
  contentType: ImageType;
  /** The image as stored and served: an SVG sanitized, others as given. */
  data: Uint8Array;
  /** What sanitizing took out of an SVG. */
  removed: string[];
}

/**
 * An uploaded image whose content is what its content type says: PNG, JPEG and WebP by
 * their signatures (file-type reads them, and names what a mismatching file is instead),
 * SVG by parsing it, then sanitized. Too large, empty, another type or a mismatch is
 * InvalidArgument: the caller's file is wrong, not its rate.
 */
export async function checkImage(data: Uint8Array, declared: string, maxBytes: number): Promise<CheckedImage> {
  const contentType = declared.split(";", 1)[0]!.trim().toLowerCase() as ImageType;
  if (!IMAGE_TYPES.includes(contentType)) {
    throw invalidArgument(`content type "${declared}" is not accepted: send ${IMAGE_TYPES.join(", ")}`);
  }
  if (data.length === 0) throw invalidArgument("the image is empty");
  if (data.length > maxBytes)
    throw invalidArgument(`the image has ${data.length} bytes, more than the ${maxBytes} allowed (PLATFORM_BRANDING_MAX_IMAGE_BYTES)`);
  const found = await fileTypeFromBuffer(data);
  if (contentType === "image/svg+xml") {
    // An SVG is text (file-type calls one with an XML declaration XML): a binary signature means it is something else.
    if (found && found.mime !== "application/xml") throw invalidArgument(`the content is ${found.mime}, not ${contentType}`);
    const svg = await sanitizeSvg(data);
    return { contentType, ...svg };
  }
  if (found?.mime !== contentType) throw invalidArgument(`the content is ${found ? found.mime : "of no image type known here"}, not ${contentType}`);
  return { contentType, data, removed: [] };
}
