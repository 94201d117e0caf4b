import { describe, expect, it } from "vitest";
import { imageProblem, MAX_IMAGE_BYTES } from "../../console/src/pages/settings/branding-image-check.js";
import { splitPreviewPage } from "../../console/src/pages/settings/branding-preview-page.js";
import {
  changedSettings,
  countSetting,
  durationSetting,
  flagSetting,
  formValues,
  sameValue,
  settingReset,
  textSetting,
  typesSetting,
} from "../../console/src/pages/settings/settings-form.js";

/*
 * The console's settings pages where they decide something without a browser: what a form
 * sends (only what differs from the values in effect, compared by value), which image files
 * it refuses before sending them, and how the branding preview's stylesheet is taken out of
 * the page.
 */

const set = (value: unknown) => ({ change: { case: "set", value } });

describe("changedSettings", () => {
  const settings = {
    allowRegister: flagSetting("self-registration"),
    maxPasswordAttempts: countSetting("lockout"),
    passwordCheckLifetime: durationSetting("password check lifetime"),
    secondFactors: typesSetting("second factors"),
    loginUiUrl: textSetting("login UI URL"),
  };
  // As the API resolves them: 240 minutes show as 4 hours.
  const resolved = {
    allowRegister: { value: false },
    maxPasswordAttempts: { value: 3 },
    passwordCheckLifetime: { value: { seconds: 14_400n } },
    secondFactors: { value: [1, 3] },
    loginUiUrl: { value: "https://login.example.com" },
  };
  const inEffect = formValues(settings, resolved);

  it("sends the properties whose value differs from the one in effect, as the Set message has them", () => {
    expect(
      changedSettings(
        settings,
        { ...inEffect, allowRegister: true, passwordCheckLifetime: { amount: "90", unit: "min" }, secondFactors: ["3", "1", "2"] },
        resolved,
      ),
    ).toEqual({
      allowRegister: set(true),
      passwordCheckLifetime: set({ seconds: 5400n }),
      secondFactors: set({ types: [3, 1, 2] }),
    });
  });

  it("sends nothing for a value left alone, changed back, or differing only as typed", () => {
    expect(changedSettings(settings, inEffect, resolved)).toEqual({});
    // A box ticked and unticked, a number and an address typed with spaces, a lifetime in another unit, the factors ticked in another order.
    const typedAgain: typeof inEffect = {
      allowRegister: false,
      maxPasswordAttempts: " 3 ",
      passwordCheckLifetime: { amount: "240", unit: "min" },
      secondFactors: ["3", "1"],
      loginUiUrl: " https://login.example.com ",
    };
    expect(changedSettings(settings, typedAgain, resolved)).toEqual({});
  });

  it("resets one property by its name, as its description says", () => {
    expect(settingReset(settings, "loginUiUrl")).toEqual({ loginUiUrl: { change: { case: "reset", value: true } } });
  });
});

describe("sameValue", () => {
  it("compares lists as sets, each member matched once", () => {
    expect(sameValue([{ key: "en" }, { key: "de" }], [{ key: "de" }, { key: "en" }])).toBe(true);
    expect(sameValue([1, 1, 2], [1, 2, 2])).toBe(false);
    expect(sameValue([1, 2], [1, 2, 2])).toBe(false);
  });

  it("compares objects property by property, and nothing else as equal", () => {
    expect(sameValue({ seconds: 60n }, { seconds: 60n })).toBe(true);
    expect(sameValue({ seconds: 60n }, { seconds: 60n, nanos: 0 })).toBe(false);
    expect(sameValue([], {})).toBe(false);
    expect(sameValue(null, {})).toBe(false);
    expect(sameValue("1", 1)).toBe(false);
  });
});

describe("imageProblem", () => {
  it("takes the four types the API takes, up to its default limit", () => {
    for (const type of ["image/png", "image/jpeg", "image/webp", "image/svg+xml"])
      expect(imageProblem({ name: "logo", type, size: MAX_IMAGE_BYTES })).toBeUndefined();
  });

  it("names the file and what is wrong with it", () => {
    expect(imageProblem({ name: "logo.gif", type: "image/gif", size: 10 })).toBe("logo.gif is of type image/gif: choose a PNG, JPEG, WebP or SVG image.");
    expect(imageProblem({ name: "logo", type: "", size: 10 })).toBe("logo is of no known type: choose a PNG, JPEG, WebP or SVG image.");
    expect(imageProblem({ name: "empty.png", type: "image/png", size: 0 })).toBe("empty.png is empty.");
    expect(imageProblem({ name: "big.png", type: "image/png", size: MAX_IMAGE_BYTES + 1 })).toBe(
      "big.png has 524,289 bytes: at most 524,288 (512 KiB) are taken.",
    );
  });
});

describe("splitPreviewPage", () => {
  it("takes the one stylesheet out of the page", () => {
    const page = '<!doctype html><html lang="en"><head><title>Sign in</title><style>:root{--primary:#5469d4}</style></head><body><main></main></body></html>';
    expect(splitPreviewPage(page)).toEqual({
      html: '<!doctype html><html lang="en"><head><title>Sign in</title></head><body><main></main></body></html>',
      css: ":root{--primary:#5469d4}",
    });
  });

  it("refuses a page without a stylesheet, or with more than one", () => {
    expect(() => splitPreviewPage("<html><body></body></html>")).toThrow("the preview came without its stylesheet");
    expect(() => splitPreviewPage("<style>a{}</style><style>b{}</style>")).toThrow("the preview has more than one stylesheet");
  });
});
