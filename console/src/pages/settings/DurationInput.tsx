import { FieldError, Input, Label, Text, TextField } from "react-aria-components";
import { useController, type Control, type FieldValues, type Path } from "react-hook-form";
import { SelectField } from "../../components/SelectField";
import { checkDuration, DURATION_UNITS, type DurationValue } from "./duration";

/** A duration of a settings form: a whole number and its unit, within the API's bounds. */
export function DurationInput<T extends FieldValues>({
  control,
  name,
  label,
  description,
  maxHours,
}: {
  control: Control<T>;
  name: Path<T>;
  label: string;
  description?: string;
  maxHours: number;
}) {
  const { field, fieldState } = useController({ control, name, rules: { validate: (v) => checkDuration(v as DurationValue, maxHours) } });
  const value = field.value as DurationValue;
  return (
    <TextField
      className="field"
      name={field.name}
      value={value.amount}
      onChange={(amount) => field.onChange({ ...value, amount })}
      onBlur={field.onBlur}
      isInvalid={fieldState.invalid}
      validationBehavior="aria"
      inputMode="numeric"
    >
      <Label>{label}</Label>
      <div className="duration">
        <Input ref={field.ref} />
        <SelectField label={`${label}: unit`} labelHidden value={value.unit} options={DURATION_UNITS} onChange={(unit) => field.onChange({ ...value, unit })} />
      </div>
      {description && <Text slot="description">{description}</Text>}
      <FieldError>{fieldState.error?.message}</FieldError>
    </TextField>
  );
}
