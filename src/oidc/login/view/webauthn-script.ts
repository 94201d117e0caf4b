import { LOGIN_PATH } from "../kit/paths.js";
import { CAPABILITY_COOKIE } from "../kit/webauthn-capability.js";

/**
 * The login pages' only script, served after @simplewebauthn/browser's bundle in one file
 * (assets.ts): it runs the WebAuthn ceremony of each `<form data-webauthn="get|create">` when
 * the form is sent, and sends the authenticator's answer as the form's `credential` field
 * (JSON). The options come from the `<script type="application/json">` block the form names in
 * `data-webauthn-options` (a data block: the CSP's `script-src 'self'` does not run it, and no
 * inline script is needed). Such forms are `hidden` in the markup: without script or WebAuthn
 * they stay hidden and the page is a plain form page, as do elements marked
 * `data-webauthn-block` (what belongs with such a form, e.g. a divider); elements marked
 * `data-webauthn-missing` (an explanation) show only then. A failed or cancelled ceremony
 * shows the form's `data-webauthn-failed` text in its `[data-webauthn-error]` element, and
 * may be tried again.
 * It also tells the pages what the browser can do (webauthn-capability.ts) in a cookie.
 * Kept as a string: it is sent to browsers as it is, never run by the service.
 */
export const WEBAUTHN_SCRIPT = `(() => {
  "use strict";
  const lib = window.SimpleWebAuthnBrowser;
  const supported = lib !== undefined && lib.browserSupportsWebAuthn();
  for (const note of document.querySelectorAll("[data-webauthn-missing]")) note.hidden = supported;
  for (const block of document.querySelectorAll("[data-webauthn-block]")) block.hidden = !supported;
  const remember = (value) => {
    document.cookie = "${CAPABILITY_COOKIE}=" + value + "; path=${LOGIN_PATH}; max-age=" + (value ? 31536000 : 0) + "; samesite=lax" + (location.protocol === "https:" ? "; secure" : "");
  };
  if (!supported) return remember("");
  lib.platformAuthenticatorIsAvailable().then((platform) => remember(platform ? "platform" : "roaming"), () => remember("roaming"));
  for (const form of document.querySelectorAll("form[data-webauthn]")) {
    const source = document.getElementById(form.dataset.webauthnOptions || "");
    const field = form.elements.namedItem("credential");
    if (!source || !field) continue;
    const optionsJSON = JSON.parse(source.textContent || "{}");
    const problem = form.querySelector("[data-webauthn-error]");
    form.hidden = false;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = form.querySelector("button");
      if (button) button.disabled = true;
      if (problem) problem.hidden = true;
      try {
        const answer = form.dataset.webauthn === "create" ? await lib.startRegistration({ optionsJSON }) : await lib.startAuthentication({ optionsJSON });
        field.value = JSON.stringify(answer);
        form.submit();
      } catch (error) {
        if (problem) {
          problem.textContent = form.dataset.webauthnFailed || String(error);
          problem.hidden = false;
        }
        if (button) button.disabled = false;
      }
    });
  }
})();
`;
