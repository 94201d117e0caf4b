import { FieldError, Label, Text, TextArea, TextField } from "react-aria-components";
import { useController, type Control, type FieldValues, type Path } from "react-hook-form";

/** A list typed one item a line (redirect URIs): a labelled text area of a react-hook-form form. */
export function TextLinesInput<T extends FieldValues>({ control, name, label, description }: { control: Control<T>; name: Path<T>; label: string; description?: string }) {
  const { field, fieldState } = useController({ control, name });
  return (
    <TextField className="field wide" name={field.name} value={field.value as string} onChange={field.onChange} onBlur={field.onBlur} isInvalid={fieldState.invalid} validationBehavior="aria">
      <Label>{label}</Label>
      <TextArea ref={field.ref} rows={3} spellCheck={false} />
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
