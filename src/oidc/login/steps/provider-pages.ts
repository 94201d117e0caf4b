import type { KoaContextWithOIDC } from "oidc-provider";
import { BUILT_IN_BRANDING } from "../../../domain/settings/branding.js";
import type { Db } from "../../../store/db.js";
import { loginLanguage } from "../view/language.js";
import { lookOf } from "../view/look.js";
import type { Frame } from "../view/look.js";
import { errorBody, escapeHtml, page, PRODUCT_NAME } from "../view/render.js";
import { PAGE_HEADERS } from "../view/send-page.js";
import { TEXTS, type Texts } from "../view/texts/index.js";
import { defaultOrgOf } from "../../../domain/user/login-names.js";

/** The errors the provider shows itself, in words for the person who sees them. */
const PEOPLE_WORDS: Record<string, (t: Texts) => string> = {
  invalid_client: (t) => t.errorUnknownApp,
  unauthorized_client: (t) => t.errorUnknownApp,
  invalid_redirect_uri: (t) => t.errorReturnAddress,
};

/**
 * The pages the provider renders itself (logout confirmation, signed out, errors it shows
 * instead of redirecting), in our look and in the language the login pages would use: the
 * instance's default organization's. They name no application: "to continue to" fits no
 * sign-out, and an error page may be about a client that does not exist.
 */
export function providerPages(db: () => Db, instanceId: string) {
  const frameOf = async (ctx: KoaContextWithOIDC): Promise<Frame> => {
    try {
      const orgId = await defaultOrgOf(db(), instanceId);
      const [lang, look] = await Promise.all([
        loginLanguage(db(), { instanceId, orgId }, ctx.oidc?.params?.ui_locales as string | undefined, ctx.get("accept-language")),
        lookOf({ db: db(), instanceId }, { orgId }),
      ]);
      return { lang, look };
    } catch {
      // An error page must show even when the database cannot say whose it is.
      return { lang: "en", look: { branding: BUILT_IN_BRANDING, name: PRODUCT_NAME, instanceName: PRODUCT_NAME } };
    }
  };
  const render = (ctx: KoaContextWithOIDC, frame: Frame, title: string, body: string) => {
    ctx.type = "html";
    ctx.set(PAGE_HEADERS);
    ctx.body = page(frame, title, body);
  };
  return {
    /** A plain form (no script): the provider's xsrf-protected form, confirmed by a button. */
    async logoutSource(ctx: KoaContextWithOIDC, form: string) {
      const frame = await frameOf(ctx);
      const t = TEXTS[frame.lang];
      render(
        ctx,
        frame,
        t.signOutTitle,
        `<p>${escapeHtml(t.signOutQuestion)}</p>${form}<button type="submit" form="op.logoutForm" name="logout" value="yes">${escapeHtml(t.signOut)}</button>`,
      );
    },
    async postLogoutSuccessSource(ctx: KoaContextWithOIDC) {
      const frame = await frameOf(ctx);
      const t = TEXTS[frame.lang];
      render(ctx, frame, t.signOutTitle, `<p role="status">${escapeHtml(t.signedOut)}</p>`);
    },
    /**
     * Errors that cannot go back to the client (no or unregistered redirect_uri, an unknown
     * client) are shown here: what happened and what to do in the person's language, and the
     * provider's own words (English, for the application's developer) under a disclosure.
     */
    async renderError(ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }) {
      const frame = await frameOf(ctx);
      const t = TEXTS[frame.lang];
      const said = PEOPLE_WORDS[out.error] ?? ((t: Texts) => t.errorBadRequest);
      const technical = `<code>${escapeHtml(out.error)}</code>${out.error_description ? `: ${escapeHtml(out.error_description)}` : ""}`;
      render(
        ctx,
        frame,
        t.errorTitle,
        `${errorBody(said(t))}<p>${escapeHtml(t.errorWhatNow)}</p><details class="muted"><summary>${escapeHtml(t.errorForDevelopers)}</summary><p>${technical}</p></details>`,
      );
    },
  };
}
