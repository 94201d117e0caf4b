import type { ReactNode } from "react";
import { useWatch, type Control } from "react-hook-form";
import { RadioInput, type Option } from "../../components/ChoiceInputs";
import { TextInput } from "../../components/TextInput";
import type { CommonValues } from "./provider-form";
import { DESCRIPTION_RULES, PROVIDER_URL_RULES } from "./rules";

/**
 * The fields of a provider of either family, in the create dialog and on its page alike: its
 * description and kind, then an endpoint's URL or `own`, the fields of the family's own kind.
 */
export function ProviderFields<T extends CommonValues>(props: {
  control: Control<T>;
  kinds: Option[];
  saved: CommonValues | undefined;
  autoFocus?: boolean;
  own: ReactNode;
}) {
  // Every family's form holds these fields under these names; TypeScript cannot see that through T.
  const control = props.control as unknown as Control<CommonValues>;
  const kind = useWatch({ control, name: "kind" });
  const keyNote =
    props.saved?.kind === "http"
      ? "A new URL gets a new signing key, shown once; the old key stops signing at once."
      : "Each message is POSTed here, signed with a key shown once when you save.";
  return (
    <>
      <TextInput control={control} name="description" label="Description" rules={DESCRIPTION_RULES} autoFocus={props.autoFocus} />
      <RadioInput control={control} name="kind" label="Sends through" options={props.kinds} />
      {kind === "http" ? (
        <TextInput control={control} name="url" label="Endpoint URL" type="url" description={keyNote} rules={PROVIDER_URL_RULES} />
      ) : (
        props.own
      )}
    </>
  );
}
