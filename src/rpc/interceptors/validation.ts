import { Code, ConnectError, createContextKey, type Interceptor, type UnaryRequest } from "@connectrpc/connect";
import { createValidator, violationsToProto, type Violation } from "@bufbuild/protovalidate";

const validator = createValidator();
type Result = ReturnType<typeof validator.validate>;
const resultKey = createContextKey<{ of: unknown; result: Result } | undefined>(undefined, { description: "validation result" });

/**
 * The buf.validate result of a request, computed once: the request context checks its `ctx`
 * early (request-context.ts), and this interceptor the rest after authorization.
 */
export function validateRequest(req: UnaryRequest): Result {
  const known = req.contextValues.get(resultKey);
  // Of this very message: a request an execution's target rewrote is checked again.
  if (known?.of === req.message) return known.result;
  const result = validator.validate(req.method.input, req.message);
  req.contextValues.set(resultKey, { of: req.message, result });
  return result;
}

/**
 * Applies the buf.validate rules of the request message. Every violation goes into the
 * error's details; the message lists them too, for callers that only read the message.
 */
export function validationInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const result = validateRequest(req);
    if (result.kind === "invalid") throw invalidRequest(result.violations);
    if (result.kind === "error") throw result.error;
    return next(req);
  };
}

/** The one shape of a validation error: every violation in the details and in the message. */
export function invalidRequest(violations: Violation[]): ConnectError {
  const [proto, schema] = violationsToProto(violations);
  const summary = violations.map((v) => v.toString()).join("; ");
  return new ConnectError(`invalid request: ${summary}`, Code.InvalidArgument, undefined, [{ desc: schema, value: proto }]);
}
