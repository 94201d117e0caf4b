import type { Control } from "react-hook-form";
import { RadioInput } from "../../components/ChoiceInputs";
import { TextInput } from "../../components/TextInput";
import { KINDS, MODES, TIMEOUT_RULES, URL_RULES, type TargetValues } from "./target-form";

/** The fields of a target, in the create dialog and on its page alike. */
export function TargetFields({ control, autoFocus }: { control: Control<TargetValues>; autoFocus?: boolean }) {
  return (
    <>
      <TextInput
        control={control}
        name="name"
        label="Name"
        rules={{ required: "Give the target a name.", maxLength: { value: 1000, message: "At most 1000 characters." } }}
        autoFocus={autoFocus}
      />
      <RadioInput control={control} name="kind" label="Kind" options={KINDS} />
      <TextInput control={control} name="url" label="URL" type="url" rules={URL_RULES} />
      <TextInput control={control} name="timeoutSeconds" label="Timeout (seconds)" rules={TIMEOUT_RULES} />
      <RadioInput control={control} name="mode" label="When the call runs" options={MODES} />
    </>
  );
}
