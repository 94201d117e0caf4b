import { Code, ConnectError } from "@connectrpc/connect";
import { DomainError, type ErrorKind } from "../domain/errors.js";
import { SEQUENCE_CONSTRAINT, TARGET_NAME_CONSTRAINT, USERNAME_CONSTRAINT, violatedUniqueConstraint } from "../store/database.js";
import { DatabaseWaitAborted } from "../store/abort.js";

const CODES: Record<ErrorKind, Code> = {
  invalid_argument: Code.InvalidArgument,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  failed_precondition: Code.FailedPrecondition,
  permission_denied: Code.PermissionDenied,
  resource_exhausted: Code.ResourceExhausted,
};

type Mapped = [Code, string];

const CONFLICT: Mapped = [Code.Aborted, "a concurrent change conflicted; retry"];
const UNAVAILABLE: Mapped = [Code.Unavailable, "the database is unavailable; retry later"];
const TOO_SLOW: Mapped = [Code.DeadlineExceeded, "the database did not answer in time"];

/** How long a client should wait before retrying a call that met an unavailable database. */
const RETRY_AFTER_SECONDS = 2;

/**
 * Unique constraints a concurrent writer can beat a command's own check to: the loser hears
 * what the check would have told it. (PGlite runs one transaction at a time: it gets here only
 * for a command with no check of its own, CreateTarget, whose caller words the error itself.)
 */
const UNIQUE_CONSTRAINTS: Record<string, string> = {
  [USERNAME_CONSTRAINT]: "the username is taken",
  orgs_instance_name: "an organization with this name already exists",
  org_domains_pkey: "the domain belongs to an organization already",
  instance_domains_pkey: "the domain belongs to an instance already",
  [TARGET_NAME_CONSTRAINT]: "a target with this name already exists",
  memberships_pkey: "the user is already a member of that context",
  projects_name: "a project with this name already exists in the organization",
  project_roles_pkey: "the project has a role with this key already",
  user_grants_user_project: "the user has a grant on this project already",
  apps_name: "an application with this name already exists in the project",
  project_grants_project_org: "the project is granted to this organization already",
  user_schemas_type: "a user schema of this type exists already",
};

/** PostgreSQL error codes (SQLSTATE) that callers should learn about, with what they mean for them. */
const SQLSTATES: Record<string, Mapped> = {
  "23505": [Code.AlreadyExists, "the resource already exists"],
  // PostgreSQL text cannot hold NUL; validation rules do not catch it, the database does.
  "22021": [Code.InvalidArgument, "text must not contain NUL characters"],
  "22P05": [Code.InvalidArgument, "text must not contain NUL characters"],
  "22003": [Code.InvalidArgument, "a number is out of range"],
  // Retried inside the command first (Store.transact); still failing after that, the caller retries.
  "40001": CONFLICT,
  "40P01": CONFLICT,
  // Shut down by an administrator, crash recovery, still starting up.
  "57P01": UNAVAILABLE,
  "57P02": UNAVAILABLE,
  "57P03": UNAVAILABLE,
  "53300": UNAVAILABLE,
  // statement_timeout (or the request's deadline), lock_timeout, idle_in_transaction_session_timeout.
  "57014": TOO_SLOW,
  "55P03": TOO_SLOW,
  "25P03": TOO_SLOW,
};

/** Node's socket errors and pg's own words for a connection that failed or never came. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Client was closed and is not queryable)/;

/**
 * The one place where any error becomes what a client sees. Unexpected errors and database
 * faults become generic messages; their causes stay in the log (`unexpected` asks for that).
 */
export function toConnectError(error: unknown): { error: ConnectError; unexpected: boolean } {
  if (error instanceof ConnectError) {
    const unexpected = error.code === Code.Internal || error.code === Code.Unknown;
    return { error: unexpected ? internal(error) : error, unexpected };
  }
  if (error instanceof DomainError) return { error: new ConnectError(error.message, CODES[error.kind], undefined, undefined, error), unexpected: false };
  if (error instanceof DatabaseWaitAborted) return { error: new ConnectError(error.message, Code.Canceled, undefined, undefined, error), unexpected: false };
  const mapped = databaseFault(error);
  if (mapped) {
    const [code, message] = mapped;
    const connectError = new ConnectError(message, code, undefined, undefined, error);
    if (code === Code.Unavailable) connectError.metadata.set("retry-after", String(RETRY_AFTER_SECONDS));
    // Client mistakes and lost races are answers; an unreachable or stalled database is an incident.
    const fault = code === Code.Unavailable || code === Code.DeadlineExceeded;
    return { error: connectError, unexpected: fault };
  }
  return { error: internal(error), unexpected: true };
}

function databaseFault(error: unknown): Mapped | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const constraint = violatedUniqueConstraint(error);
  if (typeof code === "string") {
    if (constraint === SEQUENCE_CONSTRAINT) return CONFLICT;
    if (constraint !== undefined && Object.hasOwn(UNIQUE_CONSTRAINTS, constraint)) return [Code.AlreadyExists, UNIQUE_CONSTRAINTS[constraint]!];
    const known = SQLSTATES[code];
    if (known) return known;
    // Class 08: connection exceptions.
    if (/^08[0-9A-Z]{3}$/.test(code)) return UNAVAILABLE;
    if (NETWORK_CODES.has(code)) return UNAVAILABLE;
  }
  if (error instanceof Error && typeof message === "string" && PG_CONNECTION_MESSAGES.test(message)) return UNAVAILABLE;
  return undefined;
}

function internal(cause: unknown): ConnectError {
  return new ConnectError("internal error", Code.Internal, undefined, undefined, cause);
}
