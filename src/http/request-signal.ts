import type { NodeResponse } from "./respond.js";

/** Aborted when the caller leaves before its answer is written: what bounds a request's database work. */
export function requestSignal(res: NodeResponse): AbortSignal {
  const controller = new AbortController();
  // Only a caller that left ends the request's work: aborting after every answer costs a
  // DOMException with its stack and the listeners' calls, a few percent of a token's CPU.
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
