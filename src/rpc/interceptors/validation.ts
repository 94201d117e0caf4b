import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createValidator, violationsToProto, type Violation } from "@bufbuild/protovalidate";

/**
 * Applies the buf.validate rules of the request message. Every violation goes into the
 * error's details; the message lists them too, for callers that only read the message.
 */
export function validationInterceptor(): Interceptor {
  const validator = createValidator();
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const result = validator.validate(req.method.input, req.message);
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
