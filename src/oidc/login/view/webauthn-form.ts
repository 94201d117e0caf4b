import { webauthnScriptTag } from "./assets.js";
import { escapeHtml } from "./render.js";
import type { Texts } from "./texts/index.js";

/**
 * A form whose button runs a WebAuthn ceremony in the browser (the script of assets.ts) and
 * posts the authenticator's answer as `credential`. The options travel in a JSON data block
 * beside it (no inline script: the CSP runs only the service's own file). The form is
 * `hidden` until the script finds WebAuthn; `explain` shows a sentence instead while it is
 * hidden (without script or WebAuthn), where the page is about nothing else.
 */
export interface WebAuthnFormSpec {
  ceremony: "get" | "create";
  /** Its element id, unique on the page; the options block is `<id>-options`. */
  id: string;
  action: string;
  /** Hidden inputs' HTML (the form token, a step's progress). */
  hidden: string;
  options: object;
  button: string;
  explain?: boolean;
  /** A secondary action (the first page's passkey beside "Next"): one primary button per page. */
  secondary?: boolean;
}

/** JSON inside a `<script>` element: nothing in it can end the element or open a comment. */
const jsonForHtml = (value: object) => JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

export function webauthnForm(t: Texts, f: WebAuthnFormSpec): string {
  const optionsId = `${f.id}-options`;
  return (
    `<script type="application/json" id="${optionsId}">${jsonForHtml(f.options)}</script>` +
    `<form id="${f.id}" class="webauthn${f.secondary ? " alt" : ""}" method="post" action="${escapeHtml(f.action)}" data-webauthn="${f.ceremony}" data-webauthn-options="${optionsId}" data-webauthn-failed="${escapeHtml(t.webauthnFailed)}" hidden>` +
    `${f.hidden}<input type="hidden" name="credential" value="">` +
    `<p class="error" role="alert" data-webauthn-error hidden></p>` +
    `<button type="submit">${escapeHtml(f.button)}</button></form>` +
    (f.explain ? `<p class="muted" data-webauthn-missing>${escapeHtml(t.webauthnNeedsScript)}</p>` : "") +
    webauthnScriptTag()
  );
}
