import type { DOMPurify as Purifier, WindowLike } from "dompurify";
import { invalidArgument } from "../domain/errors.js";

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * CSS that could load something, in a <style> element or an attribute (style, and the
 * presentation attributes, which are parsed as CSS): `@import`, a `url(` whose target is not
 * a fragment of the image itself, the functions that take an address as a plain string
 * (`image-set(` with its prefixed forms, `image(`, `src(`), and any backslash. An escape
 * spells any name (`\75 rl(` is `url(`, `@\69mport` is `@import`), so rather than decoding
 * escapes, which would have to match the browsers' tokenizers exactly (hex escapes of one to
 * six digits and the space after them, escaped newlines, escapes inside strings and comments)
 * to be safe, CSS with one is refused: a logo needs none.
 */
const LOADS = /\\|@import|url\s*\((?!\s*['"]?\s*#)|(?:image-set|image|src)\s*\(/i;

/**
 * A comment separates tokens in CSS (`u`, a comment, `rl(` is no `url(`), yet a reader that
 * joined them would find one: the text is checked as it is and without its comments.
 */
const loadsResource = (css: string) => LOADS.test(css) || LOADS.test(css.replace(/\/\*[\s\S]*?\*\//g, ""));

/** What is used of jsdom's window and its nodes, typed here without the browser's DOM library (jsdom.d.ts). */
interface SvgNode {
  namespaceURI: string | null;
  localName: string;
  nodeName: string;
  textContent: string | null;
  firstElementChild: unknown;
  parentNode: { removeChild(node: SvgNode): unknown } | null;
}
interface SvgWindow {
  DOMParser: new () => { parseFromString(text: string, type: "image/svg+xml"): { documentElement: SvgNode } };
  XMLSerializer: new () => { serializeToString(node: SvgNode): string };
}
type Removed = { element: SvgNode } | { attribute: { name: string } | null };

interface Sanitizer {
  window: SvgWindow;
  purify: Purifier;
  /** What the last run's hooks removed beyond DOMPurify's own report. */
  extra: string[];
}

let sanitizer: Promise<Sanitizer> | undefined;

/**
 * DOMPurify on jsdom: DOMPurify's SVG profile is an allow-list maintained against the
 * browsers' parsers (no script, no event handler attribute, no foreignObject, no animation
 * that could set an attribute), and jsdom is the DOM its authors test it with on servers
 * (lighter DOMs such as happy-dom or linkedom have let payloads through). Both load on the
 * first SVG upload, not at start.
 */
function load(): Promise<Sanitizer> {
  sanitizer ??= (async () => {
    const [{ JSDOM }, { default: createDOMPurify }] = await Promise.all([import("jsdom"), import("dompurify")]);
    const window = new JSDOM("").window as SvgWindow;
    const purify = createDOMPurify(window as unknown as WindowLike);
    const self: Sanitizer = { window, purify, extra: [] };
    // References outside the image are removed: links, <use> and <image> of other
    // documents, and CSS that could load something in attributes and styles. The image must
    // draw by itself.
    purify.addHook("uponSanitizeAttribute", (_node, data) => {
      const name = data.attrName.toLowerCase();
      if ((name === "href" || name === "xlink:href") && !data.attrValue.trim().startsWith("#")) data.keepAttr = false;
      if (loadsResource(data.attrValue)) data.keepAttr = false;
    });
    purify.addHook("uponSanitizeElement", (element, data) => {
      const node = element as unknown as SvgNode;
      if (data.tagName !== "style") return;
      // The style sheet is the style's own text nodes only: with an element inside, the text
      // content checked here is not the style sheet, and `ur<g>x</g>l(` hides a `url(`. CSS
      // has no use for elements.
      const problem = node.firstElementChild
        ? "style element with elements inside"
        : loadsResource(node.textContent ?? "")
          ? "style element with an external reference"
          : undefined;
      if (!problem) return;
      node.parentNode?.removeChild(node);
      self.extra.push(problem);
    });
    return self;
  })();
  return sanitizer;
}

/**
 * An SVG image without anything that runs or reaches out, serialized as XML. Refuses
 * what is not a well-formed SVG document (InvalidArgument). `removed` names each kind of
 * thing taken out ("script element", "onload attribute").
 */
export async function sanitizeSvg(data: Uint8Array): Promise<{ data: Uint8Array; removed: string[] }> {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch {
    throw invalidArgument("the SVG image is not UTF-8 text");
  }
  // An internal entity is expanded at each reference: a small document could grow to
  // gigabytes. SVG files need none.
  if (text.includes("<!ENTITY")) throw invalidArgument("the SVG image declares entities, which are not accepted");
  const { window, purify, extra } = await load();
  const root = new window.DOMParser().parseFromString(text, "image/svg+xml").documentElement;
  if (root.namespaceURI !== SVG_NS || root.localName !== "svg") {
    const problem =
      root.localName === "parsererror"
        ? `it is not well-formed XML (${root.textContent?.trim()})`
        : `its root element is not <svg> in the SVG namespace (${SVG_NS})`;
    throw invalidArgument(`the content is not an SVG image: ${problem}`);
  }
  extra.length = 0;
  // Sanitizing the parsed document in place and serializing it as XML: the image served is
  // exactly the tree that was checked, with no second parse by another parser in between.
  purify.sanitize(root as never, { USE_PROFILES: { svg: true, svgFilters: true }, ADD_TAGS: ["use"], IN_PLACE: true });
  const removed = new Set<string>(extra);
  for (const item of purify.removed as unknown as Removed[]) {
    if ("element" in item) removed.add(`${item.element.nodeName} element`);
    else if (item.attribute) removed.add(`${item.attribute.name} attribute`);
  }
  return { data: new TextEncoder().encode(new window.XMLSerializer().serializeToString(root)), removed: [...removed] };
}
