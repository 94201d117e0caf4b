import { Input, Label, SearchField } from "react-aria-components";

/** The text a list is searched by on the server (a search field: Escape clears it). */
export function SearchBox({ label, value, onChange }: { label: string; value: string; onChange(value: string): void }) {
  return (
    <SearchField className="field search" value={value} onChange={onChange}>
      <Label>{label}</Label>
      <Input />
    </SearchField>
  );
}
