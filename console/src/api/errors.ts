import { ConnectError } from "@connectrpc/connect";

/** An API error in the API's own words (its message), for the place that caused it. */
export function apiMessage(error: unknown): string {
  if (error instanceof ConnectError) return error.rawMessage;
  return error instanceof Error ? error.message : String(error);
}
