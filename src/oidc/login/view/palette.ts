import { ColorSpace, contrastWCAG21, mix as mixColors, parse, serialize, sRGB, XYZ_D65, type ColorTypes } from "colorjs.io/fn";

// The tree-shakable functions of colorjs.io need the spaces they convert through registered
// (as in domain/settings/branding-contrast.ts): sRGB for mixing, XYZ for the luminance.
ColorSpace.register(sRGB);
ColorSpace.register(XYZ_D65);

/**
 * The colors of one mode of the login pages, derived from a branding's four. An organization
 * chooses its colors; the pages stay readable whatever it chose: every text color is moved
 * toward black or white just far enough to reach WCAG AA (4.5:1) against the surfaces it is
 * shown on, outlines and borders 3:1 (WCAG 1.4.11). Colors that already pass are kept as
 * they are. The settings API warns about failing pairs at save time; this is the backstop.
 * Color math is colorjs.io's (the WCAG 2.1 contrast, mixing in sRGB).
 */
export interface Palette {
  /** Around the card. */
  page: string;
  card: string;
  text: string;
  /** Secondary text, on the card and on the page (the watermark). */
  muted: string;
  /** Input borders. */
  border: string;
  /** The card's own edge: decoration, no contrast asked. */
  edge: string;
  primary: string;
  onPrimary: string;
  primaryHover: string;
  /** Secondary buttons' hover background. */
  hover: string;
  link: string;
  /** Error text next to a field, and an invalid field's border. */
  warn: string;
  /** The error summary's background and its edge. */
  warnBg: string;
  warnEdge: string;
  focus: string;
}

export interface ModeColors {
  primary: string;
  background: string;
  warn: string;
  font: string;
}

/** Whether a value is a color as the branding settings store them (`#rrggbb`). */
export const isColor = (value: unknown): value is string => typeof value === "string" && /^#[0-9a-fA-F]{6}$/.test(value);

/** `#rrggbb` of a color: sRGB mixes of sRGB colors stay in its gamut. */
const HEX = { format: "hex", collapse: false };
const SRGB = { space: "srgb", outputSpace: "srgb" };
const hex = (color: string) => serialize(parse(color), HEX);
const mix = (a: string, b: string, amount: number) => serialize(mixColors(a, b, amount, SRGB), HEX);

/** The WCAG 2.1 contrast ratio of two colors (1 to 21). */
export function contrast(a: string, b: string): number {
  return contrastWCAG21(parse(a), parse(b));
}

/** Black or white, whichever stands out more on the color (one of them always reaches 4.5:1). */
function extremeAgainst(color: string): string {
  return contrast(color, "#000000") >= contrast(color, "#ffffff") ? "#000000" : "#ffffff";
}

/**
 * The color itself when it reaches `ratio` on every background, else the least mix of it
 * toward black or white (away from the backgrounds) that does.
 */
function readable(color: string, backgrounds: string[], ratio = 4.5): string {
  const surfaces = backgrounds.map((b) => parse(b));
  const passes = (c: ColorTypes) => surfaces.every((b) => contrastWCAG21(c, b) >= ratio);
  if (passes(parse(color))) return color;
  const target = extremeAgainst(backgrounds[0]!);
  for (let step = 1; step <= 20; step++) {
    const candidate = mixColors(color, target, step / 20, SRGB);
    if (passes(candidate)) return serialize(candidate, HEX);
  }
  return target;
}

export function paletteOf(c: ModeColors): Palette {
  const page = hex(c.background);
  const dark = extremeAgainst(page) === "#ffffff";
  // A card a shade lighter than the page: nearly white on a light page, lifted on a dark one.
  const card = mix(page, "#ffffff", dark ? 0.06 : 0.7);
  const warnBg = mix(card, c.warn, 0.1);
  const onPrimary = extremeAgainst(c.primary);
  return {
    page,
    card,
    text: readable(c.font, [card, page, warnBg]),
    muted: readable(mix(c.font, card, 0.3), [card, page]),
    border: readable(mix(c.font, card, 0.55), [card], 3),
    edge: mix(card, c.font, 0.12),
    primary: hex(c.primary),
    onPrimary,
    // Away from its text, so the hover keeps (and adds to) the contrast of the label.
    primaryHover: mix(c.primary, onPrimary === "#ffffff" ? "#000000" : "#ffffff", 0.15),
    hover: mix(card, c.font, 0.06),
    link: readable(c.primary, [card]),
    warn: readable(c.warn, [card]),
    warnBg,
    warnEdge: readable(c.warn, [warnBg], 3),
    focus: readable(c.primary, [card, page], 3),
  };
}
