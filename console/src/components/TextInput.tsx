import { FieldError, Input, Label, Text, TextField } from "react-aria-components";
import { Controller, type Control, type FieldValues, type Path, type RegisterOptions } from "react-hook-form";

/**
 * A text field of a form: React Aria's field (label, description and error tied to the
 * input for screen readers) driven by react-hook-form, whose rule or the API's refusal
 * shows under it.
 */
export function TextInput<T extends FieldValues>(props: {
  control: Control<T>;
  name: Path<T>;
  label: string;
  description?: string;
  rules?: RegisterOptions<T, Path<T>>;
  type?: "text" | "email" | "url" | "password";
  autoComplete?: string;
  autoFocus?: boolean;
}) {
  const { control, name, label, description, rules, type = "text", autoComplete, autoFocus } = props;
  return (
    <Controller
      control={control}
      name={name}
      rules={rules}
      render={({ field, fieldState }) => (
        <TextField
          className="field"
          name={field.name}
          value={(field.value as string | undefined) ?? ""}
          onChange={field.onChange}
          onBlur={field.onBlur}
          isInvalid={fieldState.invalid}
          isRequired={Boolean(rules?.required)}
          validationBehavior="aria"
          type={type}
          autoFocus={autoFocus}
          autoComplete={autoComplete}
        >
          <Label>{label}</Label>
          <Input ref={field.ref} />
          {description && <Text slot="description">{description}</Text>}
          <FieldError>{fieldState.error?.message}</FieldError>
        </TextField>
      )}
    />
  );
}
