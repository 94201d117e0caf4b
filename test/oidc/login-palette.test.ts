import { describe, expect, it } from "vitest";
import { BUILT_IN_BRANDING } from "../../src/domain/settings/branding.js";
import { contrast, paletteOf, type ModeColors } from "../../src/oidc/login/view/palette.js";
import { stylesheet } from "../../src/oidc/login/view/stylesheet.js";

/*
 * The login pages' colors (src/oidc/login/view/palette.ts): whatever an organization picks, every
 * text reaches WCAG AA on what it is drawn on, and outlines 3:1; colors that pass stay as
 * picked. The browser test (login-design.test.ts) checks the built-in and one branded look
 * with axe-core; these are the choices an administrator could get wrong.
 */

const CHOICES: Record<string, ModeColors> = {
  "built-in light": {
    primary: BUILT_IN_BRANDING.primaryColor,
    background: BUILT_IN_BRANDING.backgroundColor,
    warn: BUILT_IN_BRANDING.warnColor,
    font: BUILT_IN_BRANDING.fontColor,
  },
  "built-in dark": {
    primary: BUILT_IN_BRANDING.primaryColorDark,
    background: BUILT_IN_BRANDING.backgroundColorDark,
    warn: BUILT_IN_BRANDING.warnColorDark,
    font: BUILT_IN_BRANDING.fontColorDark,
  },
  "yellow primary, pale text": { primary: "#ffe600", background: "#ffffff", warn: "#ff8080", font: "#bbbbbb" },
  "grey on grey": { primary: "#777777", background: "#808080", warn: "#ff0000", font: "#888888" },
  "dark page, dark text": { primary: "#101060", background: "#0a0a0a", warn: "#600000", font: "#202020" },
  "white everything": { primary: "#ffffff", background: "#ffffff", warn: "#ffffff", font: "#ffffff" },
};

describe("login page palette", () => {
  for (const [name, colors] of Object.entries(CHOICES)) {
    it(`keeps ${name} readable`, () => {
      const p = paletteOf(colors);
      const pairs: [string, string, string, number][] = [
        ["text on card", p.text, p.card, 4.5],
        ["text on page", p.text, p.page, 4.5],
        ["text on the error summary", p.text, p.warnBg, 4.5],
        ["secondary text on card", p.muted, p.card, 4.5],
        ["secondary text on page (watermark)", p.muted, p.page, 4.5],
        ["links", p.link, p.card, 4.5],
        ["field errors", p.warn, p.card, 4.5],
        ["button label", p.onPrimary, p.primary, 4.5],
        ["button label on hover", p.onPrimary, p.primaryHover, 4.5],
        ["input borders", p.border, p.card, 3],
        ["focus ring on card", p.focus, p.card, 3],
        ["focus ring on page", p.focus, p.page, 3],
      ];
      for (const [what, fg, bg, minimum] of pairs) expect(contrast(fg, bg), `${what}: ${fg} on ${bg}`).toBeGreaterThanOrEqual(minimum);
    });
  }

  it("uses the chosen colors as they are when they pass", () => {
    const p = paletteOf(CHOICES["built-in light"]!);
    expect([p.primary, p.link, p.warn, p.text, p.page]).toEqual([
      BUILT_IN_BRANDING.primaryColor,
      BUILT_IN_BRANDING.primaryColor,
      BUILT_IN_BRANDING.warnColor,
      BUILT_IN_BRANDING.fontColor,
      BUILT_IN_BRANDING.backgroundColor,
    ]);
  });

  it("puts the dark colors under prefers-color-scheme: dark, and never a value that is not a color", () => {
    const css = stylesheet({ ...BUILT_IN_BRANDING, primaryColor: "red;}body{display:none", primaryColorDark: "#0f766e" });
    const [light, dark] = css.split("@media (prefers-color-scheme:dark)");
    expect(light).toContain(`--primary:${BUILT_IN_BRANDING.primaryColor}`);
    expect(dark).toContain("--primary:#0f766e");
    expect(css).not.toContain("red;}body");
  });
});
