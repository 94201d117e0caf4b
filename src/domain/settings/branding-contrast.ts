import { ColorSpace, contrastWCAG21, parse, sRGB, XYZ_D65 } from "colorjs.io/fn";
import type { Branding } from "./branding.js";

// colorjs.io (by editors of the CSS Color specifications; the login pages' palette uses it
// too) computes WCAG 2.1's relative luminance and contrast ratio as the standard defines
// them. Its tree-shakable functions need the color spaces they convert through registered.
ColorSpace.register(sRGB);
ColorSpace.register(XYZ_D65);

/** WCAG 2.1 level AA for normal text (1.4.3): the pages' text is all normal-sized. */
const AA_MINIMUM = 4.5;

export interface ContrastWarning {
  /** A property. */
  foreground: string;
  background: string;
  /** Rounded to two decimals; the comparison used the exact value. */
  ratio: number;
  minimum: number;
  message: string;
}

type Pair = [foreground: string, background: string];

/**
 * What the pages put on what, per mode: text, errors and links (the primary color) on the
 * background. Not the label of a primary button: the pages draw it black or white, whichever
 * stands out more, which always passes (login/view/palette.ts).
 */
const PAIRS: readonly { mode: "light" | "dark"; pairs: readonly Pair[] }[] = [
  {
    mode: "light",
    pairs: [
      ["font_color", "background_color"],
      ["warn_color", "background_color"],
      ["primary_color", "background_color"],
    ],
  },
  {
    mode: "dark",
    pairs: [
      ["font_color_dark", "background_color_dark"],
      ["warn_color_dark", "background_color_dark"],
      ["primary_color_dark", "background_color_dark"],
    ],
  },
];

const FIELD = (property: string) => property.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) as keyof Branding;

/** The pairs of a branding whose contrast is below AA; empty when every pair is readable. */
export function contrastWarnings(branding: Branding): ContrastWarning[] {
  const colorOf = (name: string) => String(branding[FIELD(name)]);
  const warnings: ContrastWarning[] = [];
  for (const { mode, pairs } of PAIRS) {
    for (const [foreground, background] of pairs) {
      const [fg, bg] = [colorOf(foreground), colorOf(background)];
      const ratio = contrastWCAG21(parse(fg), parse(bg));
      if (ratio >= AA_MINIMUM) continue;
      const rounded = Math.round(ratio * 100) / 100;
      warnings.push({
        foreground,
        background,
        ratio: rounded,
        minimum: AA_MINIMUM,
        message: `${mode} mode: ${foreground} ${fg} on ${background} ${bg} has a contrast of ${rounded}:1, below the ${AA_MINIMUM}:1 of WCAG AA`,
      });
    }
  }
  return warnings;
}
