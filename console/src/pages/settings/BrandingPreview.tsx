import type { MessageInitShape } from "@bufbuild/protobuf";
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { Label, Radio, RadioGroup } from "react-aria-components";
import type { RequestContextSchema } from "../../../../gen/platform/object/v3alpha/object_pb";
import type { SetBrandingSettingsSchema } from "../../../../gen/platform/settings/branding/v3alpha/branding_pb";
import { PlatformBrandingSettings } from "../../../../gen/platform/settings/branding/v3alpha/branding_service_pb";
import { ApiError } from "../../components/ApiError";
import { useDebounced } from "../../components/useDebounced";
import { splitPreviewPage } from "./branding-preview-page";

type Mode = "light" | "dark";

/**
 * The sign-in page as the unsaved changes would draw it (PreviewBrandingSettings, asked 300 ms
 * after the last change), in light or dark mode.
 *
 * The page is the service's HTML, shown in a frame that runs no script: `sandbox` without
 * `allow-scripts`, under the console's own CSP, which the frame's document inherits
 * (`script-src 'self'`: no inline script or handler either). The frame keeps its first,
 * empty document; the page's elements are parsed here (DOMParser runs nothing) and put in it,
 * and its stylesheet is applied through the CSSOM (branding-preview-page.ts says why). That
 * needs the frame's document within reach, hence `allow-same-origin`: harmless without
 * scripts, and it spares the CSP any widening (an empty frame is no `frame-src` load; a blob:
 * document would inherit the same CSP and need `style-src` opened for its inline style).
 * Its relative URLs (the logo) resolve against the console's address, the service's origin.
 */
export function BrandingPreview({
  settings,
  ctx,
}: {
  settings: MessageInitShape<typeof SetBrandingSettingsSchema>;
  ctx: MessageInitShape<typeof RequestContextSchema> | undefined;
}) {
  const asked = useDebounced(settings, 300);
  const preview = useQuery(PlatformBrandingSettings.method.previewBrandingSettings, { settings: asked, ctx }, { placeholderData: keepPreviousData });
  const [mode, setMode] = useState<Mode>(() => (window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"));
  const frame = useRef<HTMLIFrameElement>(null);
  const page = useMemo(() => {
    if (!preview.data?.page) return undefined;
    try {
      return splitPreviewPage(new TextDecoder().decode(preview.data.page.data));
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }, [preview.data]);
  useEffect(() => {
    if (frame.current && page && !(page instanceof Error)) show(frame.current, page, mode);
  }, [page, mode]);
  return (
    <section aria-labelledby="preview" className="branding-preview">
      <h2 id="preview">Preview</h2>
      <RadioGroup className="choices across" value={mode} onChange={(value) => setMode(value as Mode)}>
        <Label>Show</Label>
        <Radio value="light">Light mode</Radio>
        <Radio value="dark">Dark mode</Radio>
      </RadioGroup>
      <ApiError error={preview.error ?? (page instanceof Error ? page : undefined)} />
      {/* A picture of the page, not one to use: inert, so neither focus nor a click goes into it. */}
      <iframe ref={frame} sandbox="allow-same-origin" inert title="Preview of the sign-in page" className="preview-frame" />
      <p role="status" className="muted">
        {preview.isFetching ? "Updating the preview…" : ""}
      </p>
    </section>
  );
}

/** Puts the page in the frame's document, its stylesheet drawing the given mode. */
function show(frame: HTMLIFrameElement, page: { html: string; css: string }, mode: Mode) {
  const doc = frame.contentDocument;
  const view = frame.contentWindow as (Window & typeof globalThis) | null;
  if (!doc || !view) return;
  const parsed = new DOMParser().parseFromString(page.html, "text/html");
  // The sign-in page focuses its first field; the console's page keeps its own focus.
  for (const element of Array.from(parsed.querySelectorAll("[autofocus]"))) element.removeAttribute("autofocus");
  doc.replaceChild(doc.importNode(parsed.documentElement, true), doc.documentElement);
  // A constructed sheet is adopted only by the document of its own window.
  const sheet = new view.CSSStyleSheet();
  sheet.replaceSync(page.css);
  forceMode(sheet, mode);
  doc.adoptedStyleSheets = [sheet];
}

/**
 * The page follows the viewer's system (`prefers-color-scheme`), which a frame cannot be told
 * otherwise: its rules for one scheme are made to apply always, those for the other never.
 */
function forceMode(sheet: CSSStyleSheet, mode: Mode) {
  for (const rule of Array.from(sheet.cssRules)) {
    const scheme = "media" in rule ? /prefers-color-scheme:\s*(light|dark)/.exec((rule as CSSMediaRule).conditionText)?.[1] : undefined;
    if (scheme) (rule as CSSMediaRule).media.mediaText = scheme === mode ? "all" : "not all";
  }
  sheet.insertRule(`:root{color-scheme:${mode}}`, sheet.cssRules.length);
}
