import { Input, Label, Text, TextArea, TextField } from "react-aria-components";
import { CopyButton } from "./CopyButton";

/**
 * A secret the API answers only once (a client secret, a key file): in a read-only field
 * (labelled, selectable by hand) with a copy button and the warning that it cannot be read
 * again. It lives only in the answer of the call that made it, never in the query cache.
 */
export function SecretOnce({ label, value, multiline = false }: { label: string; value: string; multiline?: boolean }) {
  return (
    <div className="shown-once">
      <TextField className="field wide" value={value} isReadOnly>
        <Label>{label}</Label>
        {multiline ? <TextArea rows={8} spellCheck={false} /> : <Input spellCheck={false} />}
        <Text slot="description">Shown only now: copy it and keep it safe, it cannot be shown again.</Text>
      </TextField>
      <CopyButton value={value} label={`Copy the ${label.toLowerCase()}`} />
    </div>
  );
}
