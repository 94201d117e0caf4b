import type { ReactNode } from "react";
import { CopyButton } from "../../components/CopyButton";

/**
 * The redirect URI an administrator registers at the provider: the service's one callback
 * per host, under the issuer of the host the browser uses (CALLBACK_PATH in
 * src/oidc/login/external/state.ts), which is the origin the console is served from.
 */
const CALLBACK_URL = `${window.location.origin}/ui/login/idp/callback`;

/** A term of a `facts` list: a URL to register at the provider, with its copy button and what it is for. */
function UrlFact({ term, what, url, link = false, children }: { term: string; what: string; url: string; link?: boolean; children: ReactNode }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>
        {link ? (
          <a href={url}>
            <code>{url}</code>
          </a>
        ) : (
          <code>{url}</code>
        )}{" "}
        <CopyButton value={url} label={`Copy the ${what}`} />
        <p className="hint">{children}</p>
      </dd>
    </>
  );
}

/** A term of a `facts` list. */
export function CallbackUrl() {
  return (
    <UrlFact term="Callback URL" what="callback URL" url={CALLBACK_URL}>
      Register it at the provider as the redirect URI, and the same path on every other domain people sign in on.
    </UrlFact>
  );
}

/**
 * What a SAML identity provider's administrator registers of this service for one provider:
 * its SP metadata (whose URL is also its entity ID) and its assertion consumer service
 * (samlPaths in src/upstream-idps/saml.ts), under the origin the console is served from.
 * Terms of a `facts` list.
 */
export function SamlUrls({ idpId }: { idpId: string }) {
  const base = `${window.location.origin}/idps/${idpId}/saml`;
  return (
    <>
      <UrlFact term="SP metadata URL" what="SP metadata URL" url={`${base}/metadata`} link>
        This service's metadata as a service provider, for the identity provider to import: its URL is also the entity ID, and it names the assertion consumer
        service and the certificate of the key that signs the requests.
      </UrlFact>
      <UrlFact term="ACS URL" what="ACS URL" url={`${base}/acs`}>
        The assertion consumer service, where the identity provider posts its answer (HTTP-POST), for one that is set up by hand.
      </UrlFact>
    </>
  );
}
