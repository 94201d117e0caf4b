import { Button } from "react-aria-components";
import { useForm } from "react-hook-form";
import { ApiError } from "../../components/ApiError";
import { TextInput } from "../../components/TextInput";
import type { ProviderFamily } from "./families";
import { useFamilyCall } from "./use-family";

/**
 * A test message through the provider as saved, active or not: where it goes, then whether
 * the provider took it or its refusal in its own words (the API passes them on).
 */
export function SendTest({ family, id }: { family: ProviderFamily<unknown, unknown>; id: string }) {
  const form = useForm<{ receiver: string }>({ defaultValues: { receiver: "" } });
  const test = useFamilyCall(family, family.test, false);
  const { label, type, description, rules } = family.receiver;
  return (
    <section aria-labelledby="test">
      <h2 id="test">Send a test</h2>
      <form className="stack" onSubmit={form.handleSubmit((v) => test.mutate({ id, receiver: v.receiver.trim() }))}>
        <TextInput control={form.control} name="receiver" label={label} type={type} description={description} rules={rules} />
        <div className="actions">
          <Button type="submit" isDisabled={test.isPending}>
            Send a test
          </Button>
          <span role="status">{test.isPending ? "Sending…" : test.isSuccess ? `The provider took the test for ${test.variables.receiver}.` : ""}</span>
        </div>
        <ApiError error={test.error} />
      </form>
    </section>
  );
}
