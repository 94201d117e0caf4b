import { Checkbox, CheckboxGroup, FieldError, Label, Radio, RadioGroup, Text } from "react-aria-components";
import { useController, type Control, type FieldValues, type Path, type RegisterOptions } from "react-hook-form";

/**
 * Choices of a react-hook-form form as React Aria's radio and check boxes (labelled, arrow
 * keys within a radio group, Space to tick). Values are strings: enum numbers go through
 * String() and Number() at the form's edges.
 */
export interface Option {
  value: string;
  label: string;
}

interface ChoiceProps<T extends FieldValues> {
  control: Control<T>;
  name: Path<T>;
  label: string;
  description?: string;
}

/** One of a few options; `onChoose` lets a form fill in what depends on the choice; `rules`' refusal shows under them. */
export function RadioInput<T extends FieldValues>({
  control,
  name,
  label,
  description,
  options,
  onChoose,
  rules,
}: ChoiceProps<T> & { options: Option[]; onChoose?(value: string): void; rules?: RegisterOptions<T, Path<T>> }) {
  const { field, fieldState } = useController({ control, name, rules });
  return (
    <RadioGroup
      className="choices"
      name={field.name}
      value={field.value as string}
      onChange={(value) => {
        field.onChange(value);
        onChoose?.(value);
      }}
      isInvalid={fieldState.invalid}
      validationBehavior="aria"
    >
      <Label>{label}</Label>
      {options.map((o) => (
        <Radio key={o.value} value={o.value}>
          {o.label}
        </Radio>
      ))}
      {description && <Text slot="description">{description}</Text>}
      <FieldError>{fieldState.error?.message}</FieldError>
    </RadioGroup>
  );
}

/** Any of a few options; `rules`' refusal shows under them. */
export function CheckboxesInput<T extends FieldValues>({
  control,
  name,
  label,
  description,
  options,
  rules,
}: ChoiceProps<T> & { options: Option[]; rules?: RegisterOptions<T, Path<T>> }) {
  const { field, fieldState } = useController({ control, name, rules });
  return (
    <CheckboxGroup
      className="choices"
      name={field.name}
      value={field.value as string[]}
      onChange={field.onChange}
      isInvalid={fieldState.invalid}
      validationBehavior="aria"
    >
      <Label>{label}</Label>
      {options.map((o) => (
        <Checkbox key={o.value} value={o.value}>
          <Tick />
          {o.label}
        </Checkbox>
      ))}
      {description && <Text slot="description">{description}</Text>}
      <FieldError>{fieldState.error?.message}</FieldError>
    </CheckboxGroup>
  );
}

/** A yes or no. */
export function CheckboxInput<T extends FieldValues>({ control, name, label }: Omit<ChoiceProps<T>, "description">) {
  const { field } = useController({ control, name });
  return (
    <Checkbox className="react-aria-Checkbox single" name={field.name} isSelected={Boolean(field.value)} onChange={field.onChange}>
      <Tick />
      {label}
    </Checkbox>
  );
}

/** The box a check box draws (the input itself is visually hidden by React Aria). */
function Tick() {
  return (
    <span className="tick" aria-hidden="true">
      <svg viewBox="0 0 18 18">
        <polyline points="3.5 9.5 7.5 13.5 14.5 4.5" />
      </svg>
    </span>
  );
}
