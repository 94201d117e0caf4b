import { Button } from "react-aria-components";
import { ApiError } from "./ApiError";

/**
 * The end of a form: the API's refusal of it, its submit button, and a dialog's Cancel or,
 * once saved, a "Saved" status.
 */
export function FormFooter({
  submit,
  pending,
  error,
  cancel = false,
  saved = false,
}: {
  submit: string;
  pending: boolean;
  error: unknown;
  cancel?: boolean;
  saved?: boolean;
}) {
  return (
    <>
      <ApiError error={error} />
      <div className="actions">
        <Button type="submit" className="primary" isDisabled={pending}>
          {submit}
        </Button>
        {cancel ? <Button slot="close">Cancel</Button> : <span role="status">{saved ? "Saved" : ""}</span>}
      </div>
    </>
  );
}
