import { FieldError, Input, Label, Text, TextField } from "react-aria-components";
import { useController, type Control, type FieldValues, type Path } from "react-hook-form";

/** A color as the API takes it: `#` and six hexadecimal digits. */
export const isColor = (value: string) => /^#[0-9a-fA-F]{6}$/.test(value);

const RULES = { required: "Give a color.", validate: (v: unknown) => (typeof v === "string" && isColor(v)) || "A color as #rrggbb, such as #5469d4." };

/**
 * A color of a react-hook-form form, typed as #rrggbb or picked with the browser's own color
 * chooser beside it (each labelled, each usable by keyboard). A component of its own: every
 * setting that is a color is entered so.
 */
export function ColorInput<T extends FieldValues>({
  control,
  name,
  label,
  description,
  picker,
}: {
  control: Control<T>;
  name: Path<T>;
  label: string;
  description?: string;
  picker: string;
}) {
  const { field, fieldState } = useController({ control, name, rules: RULES });
  const value = field.value as string;
  return (
    <TextField
      className="field"
      name={field.name}
      value={value}
      onChange={field.onChange}
      onBlur={field.onBlur}
      isInvalid={fieldState.invalid}
      isRequired
      validationBehavior="aria"
    >
      <Label>{label}</Label>
      <span className="color-input">
        <Input ref={field.ref} spellCheck={false} autoComplete="off" />
        {/* The chooser shows the last whole color while one is being typed. */}
        <input type="color" aria-label={picker} value={isColor(value) ? value.toLowerCase() : "#000000"} onChange={(e) => field.onChange(e.target.value)} />
      </span>
      {description && <Text slot="description">{description}</Text>}
      <FieldError>{fieldState.error?.message}</FieldError>
    </TextField>
  );
}
