import type { Interceptor } from "@connectrpc/connect";
import { withAbortSignal } from "../../store/request-scope.js";

/**
 * The call's signal (its deadline, or the caller going away) bounds the database work done
 * for it: waits for a connection end, running statements are cancelled.
 */
export function requestScopeInterceptor(): Interceptor {
  return (next) => (req) => withAbortSignal(req.signal, () => next(req));
}
