/**
 * The one error type of the domain. Its kinds mirror the gRPC codes the outside sees;
 * rpc/errors.ts maps them once. Messages are for API callers: no SQL, no stack traces.
 */
export type ErrorKind = "invalid_argument" | "not_found" | "already_exists" | "failed_precondition" | "permission_denied" | "resource_exhausted";

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "DomainError";
  }
}

export const invalidArgument = (message: string) => new DomainError("invalid_argument", message);
export const notFound = (message: string) => new DomainError("not_found", message);
export const alreadyExists = (message: string) => new DomainError("already_exists", message);
export const failedPrecondition = (message: string) => new DomainError("failed_precondition", message);
export const permissionDenied = (message: string) => new DomainError("permission_denied", message);
export const resourceExhausted = (message: string) => new DomainError("resource_exhausted", message);
