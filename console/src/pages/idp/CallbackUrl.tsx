import { CopyButton } from "../../components/CopyButton";

/**
 * The redirect URI an administrator registers at the provider: the service's one callback
 * per host, under the issuer of the host the browser uses (CALLBACK_PATH in
 * src/oidc/login/external/state.ts), which is the origin the console is served from.
 */
const CALLBACK_URL = `${window.location.origin}/ui/login/idp/callback`;

/** A term of a `facts` list. */
export function CallbackUrl() {
  return (
    <>
      <dt>Callback URL</dt>
      <dd>
        <code>{CALLBACK_URL}</code> <CopyButton value={CALLBACK_URL} label="Copy the callback URL" />
        <p className="hint">Register it at the provider as the redirect URI, and the same path on every other domain people sign in on.</p>
      </dd>
    </>
  );
}
