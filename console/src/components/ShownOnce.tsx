import { useState } from "react";
import { Button } from "react-aria-components";

/**
 * A secret the API answers once (a token, a client secret): shown with a copy button and the
 * warning that it is not shown again. It lives only in this component's props, never in a cache.
 */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState<"yes" | "failed" | undefined>();
  return (
    <div className="panel once">
      <p>
        <strong>{label}</strong> (shown only now: copy it before you leave this page)
      </p>
      <code className="secret" aria-label={label}>
        {value}
      </code>
      <div className="actions">
        <Button
          onPress={() =>
            navigator.clipboard.writeText(value).then(
              () => setCopied("yes"),
              () => setCopied("failed"),
            )
          }
        >
          Copy
        </Button>
        <span role="status">{copied === "yes" ? "Copied" : copied === "failed" ? "The browser refused to copy: select the text instead" : ""}</span>
      </div>
    </div>
  );
}
