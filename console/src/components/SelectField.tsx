import { Button, Label, ListBox, ListBoxItem, Popover, Select, SelectValue } from "react-aria-components";

/**
 * A choice among a few fixed options (React Aria's Select: a labelled button and listbox, by
 * keyboard too). `labelHidden`: the label is for screen readers only, where the field beside
 * it says what the choice is about (a duration's unit).
 */
export function SelectField<K extends string>(props: {
  label: string;
  labelHidden?: boolean;
  value: K;
  options: readonly { key: K; label: string }[];
  onChange(key: K): void;
}) {
  const { label, labelHidden = false, value, options, onChange } = props;
  return (
    <Select className="field select" selectedKey={value} onSelectionChange={(key) => onChange(key as K)}>
      <Label className={labelHidden ? "react-aria-Label sr-only" : undefined}>{label}</Label>
      <Button>
        <SelectValue />
        <span aria-hidden="true">▾</span>
      </Button>
      <Popover>
        <ListBox items={options}>{(o) => <ListBoxItem id={o.key}>{o.label}</ListBoxItem>}</ListBox>
      </Popover>
    </Select>
  );
}
