import { BUILT_IN_BRANDING, type Branding, type BrandingFont } from "../../../domain/settings/branding.js";
import { isColor, paletteOf, type Palette } from "./palette.js";

/**
 * The login pages' one stylesheet, built from a branding: the colors of each mode as CSS
 * custom properties (dark ones under `prefers-color-scheme: dark`), then rules that use only
 * those. It is sent inline in each page (render.ts), not as a file of its own: the pages are
 * no-store and differ per organization, so a separate stylesheet would cost a second request
 * (with its own cache key per branding) to save about 4 KB, and `style-src 'unsafe-inline'`
 * lets in no resource from anywhere. No font files: the stacks name fonts systems have.
 */

const FONTS: Record<BrandingFont, string> = {
  "system-ui": 'system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue","Noto Sans",Arial,sans-serif',
  humanist: 'Seravek,"Gill Sans Nova",Ubuntu,Calibri,"DejaVu Sans",source-sans-pro,sans-serif',
  transitional: 'Charter,"Bitstream Charter","Sitka Text",Cambria,"DejaVu Serif",serif',
  monospace: 'ui-monospace,"Cascadia Code","Source Code Pro",Menlo,Consolas,"DejaVu Sans Mono",monospace',
};

const MONO = 'ui-monospace,"Cascadia Code","Source Code Pro",Menlo,Consolas,"DejaVu Sans Mono",monospace';

const VARIABLES: [string, keyof Palette][] = [
  ["page", "page"],
  ["card", "card"],
  ["text", "text"],
  ["muted", "muted"],
  ["border", "border"],
  ["edge", "edge"],
  ["primary", "primary"],
  ["on-primary", "onPrimary"],
  ["primary-hover", "primaryHover"],
  ["hover", "hover"],
  ["link", "link"],
  ["warn", "warn"],
  ["warn-bg", "warnBg"],
  ["warn-edge", "warnEdge"],
  ["focus", "focus"],
];

const variables = (p: Palette) => VARIABLES.map(([name, key]) => `--${name}:${p[key]}`).join(";");

/** Rules: a centred card, full width below 30rem (down to 320 px), 2.75rem targets, visible focus. */
const RULES =
  // `hidden` wins over the display of any rule below (the WebAuthn forms stay hidden until their script shows them).
  "*,*::before,*::after{box-sizing:border-box}[hidden]{display:none!important}" +
  "body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;padding:2rem 1rem;background:var(--page);color:var(--text);font-size:1rem;line-height:1.5;font-family:var(--font);-webkit-text-size-adjust:100%}" +
  "main{width:100%;max-width:27rem;background:var(--card);border:1px solid var(--edge);border-radius:.75rem;padding:2rem 2rem 1.75rem;box-shadow:0 1px 2px rgb(0 0 0/.06),0 8px 24px rgb(0 0 0/.06)}" +
  ".brand{display:flex;justify-content:center;align-items:center;min-height:3rem;margin:0 0 1.25rem;font-size:1.125rem;font-weight:600}" +
  ".brand img{display:block;max-height:3rem;max-width:12rem;width:auto;height:auto}" +
  "h1{margin:0;font-size:1.5rem;line-height:1.25;font-weight:600;text-align:center;overflow-wrap:anywhere}" +
  ".app{margin:.375rem 0 0;text-align:center;color:var(--muted);overflow-wrap:anywhere}.app strong{color:var(--text);font-weight:600}" +
  ".content{margin-top:1.5rem}" +
  "h2{margin:1.75rem 0 0;font-size:1rem;font-weight:600}" +
  "p{margin:1rem 0 0}.content>:first-child{margin-top:0}" +
  "form{margin:0}" +
  ".field{margin-top:1rem}" +
  "label{display:block;margin-bottom:.375rem;font-weight:500}" +
  "input{display:block;width:100%;min-height:2.75rem;margin:0;padding:.5rem .75rem;font:inherit;color:var(--text);background:var(--card);border:1px solid var(--border);border-radius:.5rem}" +
  'input[aria-invalid="true"]{border:2px solid var(--warn)}' +
  ".field-error{margin:.375rem 0 0;color:var(--warn);font-size:.875rem}.hint{margin:.375rem 0 0;font-size:.875rem}" +
  ".error{margin:0 0 1rem;padding:.75rem 1rem;background:var(--warn-bg);border-left:4px solid var(--warn-edge);border-radius:.375rem}" +
  "button{display:block;width:100%;min-height:2.75rem;margin:1.25rem 0 0;padding:.5rem 1rem;font:inherit;font-weight:600;color:var(--on-primary);background:var(--primary);border:1px solid var(--primary);border-radius:.5rem;cursor:pointer;overflow-wrap:anywhere}" +
  "button:hover{background:var(--primary-hover);border-color:var(--primary-hover)}" +
  ".alt button{margin-top:.75rem;font-weight:500;color:var(--text);background:transparent;border-color:var(--border)}.alt button:hover{background:var(--hover);border-color:var(--border)}" +
  // A way out that is no choice among the others (skip, not now): it reads as a link, with a link's contrast and a button's target size.
  ".quiet{margin-top:1rem;text-align:center}.quiet button{display:inline-block;width:auto;margin:0;padding:.5rem .75rem;font-weight:400;color:var(--link);background:transparent;border:0;text-decoration:underline;text-underline-offset:.2em}.quiet button:hover{background:transparent;text-decoration-thickness:2px}.quiet .muted{margin:0;font-size:.875rem}" +
  '.or{display:flex;align-items:center;gap:.75rem;margin:1.5rem 0 0;color:var(--muted);font-size:.875rem}.or::before,.or::after{content:"";flex:1;border-top:1px solid var(--edge)}' +
  "a{color:var(--link);text-underline-offset:.2em}a:hover{text-decoration-thickness:2px}" +
  ":focus-visible{outline:3px solid var(--focus);outline-offset:2px}" +
  ".links{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.5rem 1rem;margin-top:1.25rem}.links>:only-child{margin:0 auto}" +
  ".muted{color:var(--muted)}details{margin-top:1.25rem}summary{cursor:pointer}details p{overflow-wrap:anywhere}" +
  ".account{display:block;width:fit-content;max-width:100%;margin:0 auto;padding:.25rem .875rem;border:1px solid var(--edge);border-radius:999px;overflow-wrap:anywhere}" +
  ".qr{width:13rem;max-width:100%;margin:1rem auto 0;padding:.5rem;background:#fff;border-radius:.5rem}.qr svg{display:block;width:100%;height:auto}" +
  `code{font-family:${MONO};font-size:.9375em}` +
  ".key code{color:var(--text);letter-spacing:.05em;overflow-wrap:anywhere;user-select:all}" +
  ".sr-only{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}" +
  "footer{margin-top:1.5rem;color:var(--muted);font-size:.8125rem;text-align:center}footer p{margin:0}" +
  "@media (max-width:30rem){body{justify-content:flex-start;padding:0;background:var(--card)}main{max-width:none;border:0;border-radius:0;box-shadow:none;padding:1.5rem 1.25rem}footer{margin:auto 0 1rem}}" +
  "@media (forced-colors:active){button,input{border:1px solid}}";

const built = new Map<string, string>();
/** Distinct brandings kept built; an instance has a few (one per branded organization). */
const MAX_BUILT = 500;

/** The stylesheet of a branding, built once per distinct branding in this process. */
export function stylesheet(b: Branding): string {
  const key = [
    b.primaryColor,
    b.backgroundColor,
    b.warnColor,
    b.fontColor,
    b.primaryColorDark,
    b.backgroundColorDark,
    b.warnColorDark,
    b.fontColorDark,
    b.font,
  ].join(" ");
  let css = built.get(key);
  if (css === undefined) {
    // The settings API takes only #rrggbb; a value it did not check falls back, and never reaches the CSS as text.
    const color = (key: keyof Branding) => (isColor(b[key]) ? (b[key] as string) : (BUILT_IN_BRANDING[key] as string));
    const light = paletteOf({ primary: color("primaryColor"), background: color("backgroundColor"), warn: color("warnColor"), font: color("fontColor") });
    const dark = paletteOf({
      primary: color("primaryColorDark"),
      background: color("backgroundColorDark"),
      warn: color("warnColorDark"),
      font: color("fontColorDark"),
    });
    css = `:root{color-scheme:light dark;--font:${FONTS[b.font] ?? FONTS["system-ui"]};${variables(light)}}@media (prefers-color-scheme:dark){:root{${variables(dark)}}}${RULES}`;
    if (built.size >= MAX_BUILT) built.delete(built.keys().next().value!);
    built.set(key, css);
  }
  return css;
}
