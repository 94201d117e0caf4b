import { Button, FieldError, FileTrigger, InputContext, Label, Text, TextArea, TextField } from "react-aria-components";
import { useController, type Control, type FieldValues, type Path, type RegisterOptions } from "react-hook-form";

/**
 * A text of several lines as a labelled text area of a react-hook-form form: a list typed one
 * item a line (redirect URIs, read with `lines`), or a text such as a message's body.
 * `fromFile`: a button also loads a chosen file's text into it (read by the browser; nothing
 * is sent until the form is).
 */
export function TextLinesInput<T extends FieldValues>(props: {
  control: Control<T>;
  name: Path<T>;
  label: string;
  description?: string;
  rows?: number;
  rules?: RegisterOptions<T, Path<T>>;
  fromFile?: { label: string; types: string[] };
}) {
  const { control, name, label, description, rows = 3, rules, fromFile } = props;
  const { field, fieldState } = useController({ control, name, rules });
  return (
    <TextField
      className="field wide"
      name={field.name}
      value={field.value as string}
      onChange={field.onChange}
      onBlur={field.onBlur}
      isInvalid={fieldState.invalid}
      isRequired={Boolean(rules?.required)}
      validationBehavior="aria"
    >
      <Label>{label}</Label>
      <TextArea ref={field.ref} rows={rows} spellCheck={false} />
      {fromFile && (
        // The file input is not the field's: the text field's context (its value, its label) stays off it.
        <InputContext.Provider value={{}}>
          <div>
            <FileTrigger acceptedFileTypes={fromFile.types} onSelect={(files) => void files?.[0]?.text().then(field.onChange)}>
              <Button>{fromFile.label}</Button>
            </FileTrigger>
          </div>
        </InputContext.Provider>
      )}
      {description && <Text slot="description">{description}</Text>}
      <FieldError>{fieldState.error?.message}</FieldError>
    </TextField>
  );
}

/** The items of such a list: its non-empty lines, trimmed. */
export function lines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
}
