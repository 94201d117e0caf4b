import type { Control } from "react-hook-form";
import { CheckboxesInput } from "../../components/ChoiceInputs";
import { TextInput } from "../../components/TextInput";
import { TextLinesInput } from "../../components/TextLinesInput";
import { AUTHENTICATORS, jsonObject, type SchemaValues } from "./form";

/** The fields of a user schema, in the create dialog and on its page alike. */
export function SchemaFields({ control, autoFocus }: { control: Control<SchemaValues>; autoFocus?: boolean }) {
  return (
    <>
      <TextInput
        control={control}
        name="type"
        label="Type"
        description="The kind of user, unique in the instance regardless of case."
        rules={{ required: "Give the schema a type.", maxLength: { value: 200, message: "At most 200 characters." } }}
        autoFocus={autoFocus}
      />
      <CheckboxesInput
        control={control}
        name="authenticators"
        label="How its users may authenticate"
        options={AUTHENTICATORS}
        rules={{ validate: (v) => v.length > 0 || "Choose at least one." }}
      />
      <TextLinesInput
        control={control}
        name="schema"
        label="JSON Schema (draft 2020-12)"
        description="Only references inside the schema (#/$defs/…); at most 64 KiB."
        rows={14}
        rules={{ required: "Give the JSON Schema.", validate: (v) => jsonObject(String(v)) }}
      />
    </>
  );
}
