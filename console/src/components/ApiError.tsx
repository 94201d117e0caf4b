import { apiMessage } from "../api/errors";

/** An API error where it happened, in the API's words. */
export function ApiError({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {apiMessage(error)}
    </p>
  );
}
