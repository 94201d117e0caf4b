import { Code, ConnectError } from "@connectrpc/connect";
import { DomainError, type ErrorKind } from "../domain/errors.js";

const CODES: Record<ErrorKind, Code> = {
  invalid_argument: Code.InvalidArgument,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  failed_precondition: Code.FailedPrecondition,
  permission_denied: Code.PermissionDenied,
  unauthenticated: Code.Unauthenticated,
  resource_exhausted: Code.ResourceExhausted,
  unavailable: Code.Unavailable,
};

/** PostgreSQL error codes that callers should learn about, with what they mean for them. */
const DATABASE_CODES: Record<string, [Code, string]> = {
  "23505": [Code.AlreadyExists, "the resource already exists"],
  // PostgreSQL text cannot hold NUL; validation rules do not catch it, the database does.
  "22021": [Code.InvalidArgument, "text must not contain NUL characters"],
  "22P05": [Code.InvalidArgument, "text must not contain NUL characters"],
  "40001": [Code.Aborted, "a concurrent change conflicted; retry"],
  "40P01": [Code.Aborted, "a concurrent change conflicted; retry"],
  "57P01": [Code.Unavailable, "the database is restarting"],
  "53300": [Code.Unavailable, "the database has no free connections"],
};

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE"]);

/**
 * The one place where any error becomes what a client sees. Unknown errors become
 * Internal with no detail: their cause stays in the log only.
 */
export function toConnectError(error: unknown): { error: ConnectError; unexpected: boolean } {
  if (error instanceof ConnectError) return { error, unexpected: error.code === Code.Internal || error.code === Code.Unknown };
  if (error instanceof DomainError) return { error: new ConnectError(error.message, CODES[error.kind], undefined, undefined, error), unexpected: false };
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") {
    const known = DATABASE_CODES[code];
    if (known) return { error: new ConnectError(known[1], known[0], undefined, undefined, error), unexpected: false };
    if (NETWORK_CODES.has(code)) {
      return { error: new ConnectError("the database is unreachable", Code.Unavailable, undefined, undefined, error), unexpected: true };
    }
  }
  return { error: new ConnectError("internal error", Code.Internal, undefined, undefined, error), unexpected: true };
}
