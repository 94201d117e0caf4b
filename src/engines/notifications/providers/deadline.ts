import { SendFailed } from "../message.js";

/**
 * Bounds one send: past `timeoutMs`, or when the caller gives up (`signal`), it fails as one
 * that may pass later, and the signal handed to `work` aborts. Work that may outlive its
 * deadline must stop on that signal: a pooled email still queued for a connection would
 * otherwise go out later, beside the retry of the message it belongs to.
 */
export function withinDeadline<T>(work: (signal: AbortSignal) => Promise<T>, timeoutMs: number, signal: AbortSignal | undefined, what: string): Promise<T> {
  const stopWork = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    const fail = (words: string) => {
      const failure = new SendFailed(words, true);
      stopWork.abort(failure);
      reject(failure);
    };
    timer = setTimeout(() => fail(`${what} took longer than ${timeoutMs} ms`), timeoutMs);
    onAbort = () => fail(`${what} was abandoned`);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
  const working = stopWork.signal.aborted ? stop : work(stopWork.signal);
  working.catch(() => {});
  // Once the deadline has passed, it is the reason: not the error the abort made the work throw.
  const settled = Promise.race([working, stop]).catch((error: unknown) => {
    throw stopWork.signal.aborted ? stopWork.signal.reason : error;
  });
  return settled.finally(() => {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort!);
  });
}
