import type { KoaContextWithOIDC } from "oidc-provider";
import type { Db } from "../../store/eventstore.js";
import { loginLanguage } from "./language.js";
import { errorBody, escapeHtml, page } from "./render.js";
import { TEXTS, type Language } from "./texts/index.js";
import { defaultOrgOf } from "../../domain/user/login-names.js";

const HEADERS = {
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
};

/**
 * The pages the provider renders itself (logout confirmation, signed out, errors it shows
 * instead of redirecting), in our look and in the language the login pages would use.
 */
export function providerPages(db: () => Db, instanceId: string) {
  const languageOf = async (ctx: KoaContextWithOIDC): Promise<Language> => {
    try {
      return await loginLanguage(db(), { instanceId, orgId: await defaultOrgOf(db(), instanceId) }, ctx.oidc?.params?.ui_locales as string | undefined, ctx.get("accept-language"));
    } catch {
      return "en";
    }
  };
  const render = (ctx: KoaContextWithOIDC, lang: Language, title: string, body: string) => {
    ctx.type = "html";
    ctx.set(HEADERS);
    ctx.body = page(lang, title, body);
  };
  return {
    /** A plain form (no script): the provider's xsrf-protected form, confirmed by a button. */
    async logoutSource(ctx: KoaContextWithOIDC, form: string) {
      const lang = await languageOf(ctx);
      const t = TEXTS[lang];
      render(ctx, lang, t.signOutTitle, `<p>${escapeHtml(t.signOutQuestion)}</p>${form}<button type="submit" form="op.logoutForm" name="logout" value="yes">${escapeHtml(t.signOut)}</button>`);
    },
    async postLogoutSuccessSource(ctx: KoaContextWithOIDC) {
      const lang = await languageOf(ctx);
      const t = TEXTS[lang];
      render(ctx, lang, t.signOutTitle, `<p>${escapeHtml(t.signedOut)}</p>`);
    },
    /** Errors that cannot go back to the client (no or unregistered redirect_uri) are shown here. */
    async renderError(ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }) {
      const lang = await languageOf(ctx);
      const t = TEXTS[lang];
      render(ctx, lang, t.errorTitle, `${errorBody(out.error_description ?? out.error)}<p class="muted"><code>${escapeHtml(out.error)}</code></p>`);
    },
  };
}
