/**
 * The page PreviewBrandingSettings answers, made fit for the console's frame: the login pages
 * carry their stylesheet inline (`<style>`, src/oidc/login/view/render.ts), which the console's CSP
 * refuses in any document it parses or frames, and says so in the browser's console. So the
 * stylesheet is taken out as text before anything parses the page, and applied through the
 * CSSOM (BrandingPreview.tsx), which the CSP does not govern. The service writes one
 * `<style>` element with generated CSS in it (no `</style>` inside); a page without one is
 * refused rather than shown unstyled.
 */
export function splitPreviewPage(page: string): { html: string; css: string } {
  const open = page.indexOf("<style>");
  const close = page.indexOf("</style>", open);
  if (open < 0 || close < 0) throw new Error("the preview came without its stylesheet");
  if (page.includes("<style", close)) throw new Error("the preview has more than one stylesheet");
  return { html: page.slice(0, open) + page.slice(close + "</style>".length), css: page.slice(open + "<style>".length, close) };
}
