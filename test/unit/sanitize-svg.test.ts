import { describe, expect, it } from "vitest";
import { sanitizeSvg } from "../../src/images/sanitize-svg.js";

/*
 * The CSS of an SVG image (its <style> elements, style attributes and presentation
 * attributes) must not be able to load anything, however it is spelt: CSS escapes can spell
 * any name (`\75 rl(` is `url(`), and some functions take an address as a plain string.
 * test/settings/branding.test.ts checks the same through the API.
 */

const svg = (inner: string) => Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">${inner}<rect width="1" height="1"/></svg>`);
const sanitized = async (inner: string) => {
  const { data, removed } = await sanitizeSvg(svg(inner));
  return { served: new TextDecoder().decode(data), removed };
};

const IN_STYLE_ELEMENTS: [string, string][] = [
  ["a hex escape in url(", ".a{background:\\75 rl(https://evil.example/a)}"],
  ["an escape in the middle of url(", ".a{background:u\\72l(https://evil.example/a)}"],
  ["an escaped letter of @import", '@\\69mport "https://evil.example/x.css";'],
  ["an escaped @ of @import", '\\40 import "https://evil.example/x.css";'],
  ["an escape of a plain letter", ".a{background:\\url(https://evil.example/a)}"],
  ["a comment inside url(", ".a{background:u/**/rl(https://evil.example/a)}"],
  ["a comment inside @import", '@im/**/port "https://evil.example/x.css";'],
  ["image-set( with a string", '.a{background:image-set("https://evil.example/a.png" 1x)}'],
  ["-webkit-image-set(", '.a{background:-webkit-image-set("https://evil.example/a.png" 1x)}'],
  ["image( with a string", '.a{background:image("https://evil.example/a.png")}'],
  ["src(", '.a{background:src("https://evil.example/a.png")}'],
  ["upper case", ".a{background:URL(https://evil.example/a)}"],
  ["@import of a string", '@IMPORT "https://evil.example/x.css";'],
  ["@font-face", '@font-face{font-family:x;src:url("https://evil.example/f.woff")}'],
  ["an XML character reference", "&#64;import 'https://evil.example/x.css';"],
  ["a CDATA section", '<![CDATA[.a{background:url("https://evil.example/a")}]]>'],
];

describe("sanitizeSvg: CSS that could load a resource", () => {
  it.each(IN_STYLE_ELEMENTS)("removes a <style> with %s", async (_label, css) => {
    const { served, removed } = await sanitized(`<style>${css}</style>`);
    expect(removed).toEqual(["style element with an external reference"]);
    expect(served).not.toContain("<style");
    expect(served).not.toContain("evil.example");
  });

  it("removes a <style> whose text is split by an element: CSS reads only the style's own text", async () => {
    // CSS sees "url(https://evil.example/a)": the text of the <tspan> is not the style sheet's.
    const { served, removed } = await sanitized("<style>.a{background:ur<tspan>zz</tspan>l(https://evil.example/a)}</style>");
    expect(removed).toEqual(["style element with elements inside"]);
    expect(served).not.toContain("evil.example");
  });

  it.each([
    ["style", "fill:\\75 rl(https://evil.example/p)"],
    ["style", "fill:u\\72l(https://evil.example/p)"],
    ["style", "fill:u/**/rl(https://evil.example/p)"],
    ["style", "fill:image-set('https://evil.example/p' 1x)"],
    ["style", "fill:src('https://evil.example/p')"],
    ["fill", "\\75 rl(https://evil.example/p)"],
    ["fill", "image('https://evil.example/p')"],
    ["mask", "URL(https://evil.example/m)"],
  ])("removes the attribute %s=%j", async (name, value) => {
    const { served, removed } = await sanitized(`<rect ${name}="${value}" width="1" height="1"/>`);
    expect(removed).toEqual([`${name} attribute`]);
    expect(served).not.toContain("evil.example");
  });

  it("keeps CSS that loads nothing: colors, classes, references to the image's own fragments, comments", async () => {
    const css = "/* brand */ .mark { fill: #123456; stroke: url(#g) } .b { fill: url( '#g' ) } @media (prefers-color-scheme: dark) { .mark { fill: #fff } }";
    const { served, removed } = await sanitized(
      `<defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient></defs><style>${css}</style><rect class="mark" style="fill: url(#g); opacity: .5" fill="url(&quot;#g&quot;)" width="2" height="2"/>`,
    );
    expect(removed).toEqual([]);
    expect(served).toContain(`<style>${css}</style>`);
    expect(served).toContain('style="fill: url(#g); opacity: .5"');
    expect(served).toContain('fill="url(&quot;#g&quot;)"');
  });
});
