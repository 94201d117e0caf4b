import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createValidator, violationsToProto } from "@bufbuild/protovalidate";

/**
 * Applies the buf.validate rules of the request message. Every violation goes into the
 * error's details; the message lists them too, for callers that only read the message.
 */
export function validationInterceptor(): Interceptor {
  const validator = createValidator();
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const result = validator.validate(req.method.input, req.message);
    if (result.kind === "invalid") {
      const [violations, schema] = violationsToProto(result.violations);
      const summary = result.violations.map((v) => v.toString()).join("; ");
      throw new ConnectError(`invalid request: ${summary}`, Code.InvalidArgument, undefined, [
        { desc: schema, value: violations },
      ]);
    }
    if (result.kind === "error") throw result.error;
    return next(req);
  };
}
