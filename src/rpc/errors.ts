import { Code, ConnectError } from "@connectrpc/connect";
import { DomainError, type ErrorKind } from "../domain/errors.js";

const CODES: Record<ErrorKind, Code> = {
  invalid_argument: Code.InvalidArgument,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  failed_precondition: Code.FailedPrecondition,
  permission_denied: Code.PermissionDenied,
  unauthenticated: Code.Unauthenticated,
};

const CONFLICT: [Code, string] = [Code.Aborted, "a concurrent change conflicted; retry"];

/** PostgreSQL error codes that callers should learn about, with what they mean for them. */
const DATABASE_CODES: Record<string, [Code, string]> = {
  "23505": [Code.AlreadyExists, "the resource already exists"],
  // PostgreSQL text cannot hold NUL; validation rules do not catch it, the database does.
  "22021": [Code.InvalidArgument, "text must not contain NUL characters"],
  "22P05": [Code.InvalidArgument, "text must not contain NUL characters"],
  "22003": [Code.InvalidArgument, "a number is out of range"],
  "40001": CONFLICT,
  "40P01": CONFLICT,
  "57P01": [Code.Unavailable, "the database is restarting"],
  "53300": [Code.Unavailable, "the database has no free connections"],
};

/** Two writers appended to one aggregate at once: the later one lost, and may retry. */
const SEQUENCE_CONSTRAINT = "events_aggregate_sequence";

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE"]);

/**
 * The one place where any error becomes what a client sees. Unexpected errors become
 * Internal with no detail: their cause stays in the log only.
 */
export function toConnectError(error: unknown): { error: ConnectError; unexpected: boolean } {
  if (error instanceof ConnectError) {
    const unexpected = error.code === Code.Internal || error.code === Code.Unknown;
    return { error: unexpected ? internal(error) : error, unexpected };
  }
  if (error instanceof DomainError) return { error: new ConnectError(error.message, CODES[error.kind], undefined, undefined, error), unexpected: false };
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  if (typeof code === "string") {
    const known = code === "23505" && constraint === SEQUENCE_CONSTRAINT ? CONFLICT : DATABASE_CODES[code];
    if (known) return { error: new ConnectError(known[1], known[0], undefined, undefined, error), unexpected: false };
    if (NETWORK_CODES.has(code)) {
      return { error: new ConnectError("the database is unreachable", Code.Unavailable, undefined, undefined, error), unexpected: true };
    }
  }
  return { error: internal(error), unexpected: true };
}

function internal(cause: unknown): ConnectError {
  return new ConnectError("internal error", Code.Internal, undefined, undefined, cause);
}
