import { describe, expect, it } from "vitest";
import { resetChange, setChanges } from "../../console/src/api/settings-changes.js";
import { imageProblem, MAX_IMAGE_BYTES } from "../../console/src/pages/settings/branding-image-check.js";
import { splitPreviewPage } from "../../console/src/pages/settings/branding-preview-page.js";

/*
 * The console's settings pages where they decide something without a browser: what a form
 * sends (only what differs from the values in effect), which image files it refuses before
 * sending them, and how the branding preview's stylesheet is taken out of the page.
 */

describe("setChanges", () => {
  it("sets only the properties whose value differs from the one in effect", () => {
    const inEffect = { primaryColor: "#5469d4", disableWatermark: false, font: "1" };
    expect(setChanges(inEffect, inEffect)).toEqual({});
    expect(setChanges({ ...inEffect, disableWatermark: true, font: "3" }, inEffect)).toEqual({
      disableWatermark: { change: { case: "set", value: true } },
      font: { change: { case: "set", value: "3" } },
    });
  });

  it("resets one property by its name", () => {
    expect(resetChange("subject")).toEqual({ subject: { change: { case: "reset", value: true } } });
  });
});

describe("imageProblem", () => {
  it("takes the four types the API takes, up to its default limit", () => {
    for (const type of ["image/png", "image/jpeg", "image/webp", "image/svg+xml"]) expect(imageProblem({ name: "logo", type, size: MAX_IMAGE_BYTES })).toBeUndefined();
  });

  it("names the file and what is wrong with it", () => {
    expect(imageProblem({ name: "logo.gif", type: "image/gif", size: 10 })).toBe("logo.gif is of type image/gif: choose a PNG, JPEG, WebP or SVG image.");
    expect(imageProblem({ name: "logo", type: "", size: 10 })).toBe("logo is of no known type: choose a PNG, JPEG, WebP or SVG image.");
    expect(imageProblem({ name: "empty.png", type: "image/png", size: 0 })).toBe("empty.png is empty.");
    expect(imageProblem({ name: "big.png", type: "image/png", size: MAX_IMAGE_BYTES + 1 })).toBe("big.png has 524,289 bytes: at most 524,288 (512 KiB) are taken.");
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
