import { useEffect, useState } from "react";
import { Input, Label, Text, TextArea, TextField } from "react-aria-components";
import { CopyButton } from "./CopyButton";

/**
 * A secret the API answers only once (a client secret, a key file): in a read-only field
 * (labelled, selectable by hand) with a copy button, a download link when it is a file, and
 * the warning that it cannot be read again. It lives only in the answer of the call that
 * made it, never in the query cache.
 */
export function SecretOnce({
  label,
  value,
  multiline = false,
  download,
}: {
  label: string;
  value: string;
  multiline?: boolean;
  download?: { name: string; type: string };
}) {
  return (
    <div className="shown-once">
      <TextField className="field wide" value={value} isReadOnly>
        <Label>{label}</Label>
        {multiline ? <TextArea rows={8} spellCheck={false} /> : <Input spellCheck={false} />}
        <Text slot="description">Shown only now: copy it and keep it safe, it cannot be shown again.</Text>
      </TextField>
      <div className="actions">
        <CopyButton value={value} label={`Copy the ${label.toLowerCase()}`} />
        {download && <DownloadLink value={value} name={download.name} type={download.type} />}
      </div>
    </div>
  );
}

/** The secret saved as a file by the browser: an object URL (no data leaves the page), released with the link. */
function DownloadLink({ value, name, type }: { value: string; name: string; type: string }) {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    const made = URL.createObjectURL(new Blob([value], { type }));
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [value, type]);
  if (!url) return null;
  return (
    <a className="button" href={url} download={name}>
      Download {name}
    </a>
  );
}
