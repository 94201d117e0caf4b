import { useState } from "react";
import { Button } from "react-aria-components";

/**
 * Copies a value to the clipboard and says so next to the button (a live region, so a screen
 * reader hears it too); a browser that refuses leaves the value to be selected by hand.
 */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [outcome, setOutcome] = useState<"copied" | "refused" | undefined>();
  return (
    <span className="copy">
      <Button
        aria-label={label}
        onPress={() =>
          navigator.clipboard.writeText(value).then(
            () => setOutcome("copied"),
            () => setOutcome("refused"),
          )
        }
      >
        Copy
      </Button>
      <span role="status">{outcome === "copied" ? "Copied" : outcome === "refused" ? "The browser refused to copy: select the text instead" : ""}</span>
    </span>
  );
}
