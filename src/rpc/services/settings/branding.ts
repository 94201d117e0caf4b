import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedBrandingSettingsSchema, SetBrandingSettingsSchema } from "../../../../gen/platform/settings/branding/v3alpha/branding_pb.js";
import type { PlatformBrandingSettings } from "../../../../gen/platform/settings/branding/v3alpha/branding_service_pb.js";
import { BRANDING_SETTINGS, brandingFromResolved, type BrandingImage } from "../../../domain/settings/branding.js";
import { contrastWarnings } from "../../../domain/settings/branding-contrast.js";
import { removeBrandingImage, setBrandingImage } from "../../../domain/settings/branding-images.js";
import { checkImage } from "../../../images/check-image.js";
import type { Store } from "../../../store/database.js";
import { askedContext, editorOf } from "../../context.js";
import { handlerStore } from "../writes.js";
import { changeFromProto, settingsDetailsToProto } from "./codec.js";
import { previewSettings } from "../../../domain/settings/rows.js";
import { instanceName } from "../../../domain/instance/queries.js";
import { previewLanguage, previewPage } from "../../../oidc/login/view/preview.js";
import { PRODUCT_NAME } from "../../../oidc/login/view/render.js";
import { kindService } from "./kind-service.js";

/** `maxImageBytes`: PLATFORM_BRANDING_MAX_IMAGE_BYTES. */
export function brandingSettingsService({
  store,
  branding,
}: {
  store: Pick<Store, "forRequest">;
  branding: { maxImageBytes: number };
}): ServiceImpl<typeof PlatformBrandingSettings> {
  const { database, write } = handlerStore(store);
  const settings = kindService({ database, write }, BRANDING_SETTINGS, SetBrandingSettingsSchema, ResolvedBrandingSettingsSchema);
  return {
    async setBrandingSettings(req, ctx) {
      const { details, resolved } = await settings.setAndResolve(req.settings!, ctx);
      return { details, warnings: contrastWarnings(brandingFromResolved(resolved)) };
    },
    resolveBrandingSettings: (_req, ctx) => settings.resolve(ctx),
    async previewBrandingSettings(req, ctx) {
      const lang = previewLanguage(req.language);
      const at = askedContext(ctx.values);
      const change = req.settings ? changeFromProto(SetBrandingSettingsSchema, req.settings, BRANDING_SETTINGS) : { set: {}, reset: [] };
      const { db } = database(ctx);
      const [resolved, name] = await Promise.all([
        previewSettings(db, BRANDING_SETTINGS, at, change),
        at.type === "system" ? PRODUCT_NAME : instanceName(db, at.instanceId),
      ]);
      const html = previewPage(brandingFromResolved(resolved), name, lang);
      return { page: { contentType: "text/html; charset=utf-8", data: Buffer.from(html) } };
    },
    async setBrandingImage(req, ctx) {
      // Checked (an SVG parsed and sanitized) before the transaction: it holds no lock meanwhile.
      const image = await checkImage(req.content!.data, req.content!.contentType, branding.maxImageBytes);
      const at = askedContext(ctx.values);
      const done = await write(ctx, (tx) => setBrandingImage(tx, editorOf(ctx), at, req.image as BrandingImage, image));
      return { details: settingsDetailsToProto(done), url: done.url, removed: image.removed };
    },
    async removeBrandingImage(req, ctx) {
      const at = askedContext(ctx.values);
      const done = await write(ctx, (tx) => removeBrandingImage(tx, editorOf(ctx), at, req.image as BrandingImage));
      return { details: settingsDetailsToProto(done) };
    },
  };
}
