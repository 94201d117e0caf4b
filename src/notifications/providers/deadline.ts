import { SendFailed } from "../message.js";

/**
 * Bounds one send: past `timeoutMs`, or when the caller gives up (`signal`), it fails as one
 * that may pass later. The work itself is not stopped (nodemailer's own timeouts end its
 * connection), but nobody waits for it any more.
 */
export function withinDeadline<T>(work: Promise<T>, timeoutMs: number, signal: AbortSignal | undefined, what: string): Promise<T> {
  work.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SendFailed(`${what} took longer than ${timeoutMs} ms`, true)), timeoutMs);
    onAbort = () => reject(new SendFailed(`${what} was abandoned`, true));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([work, stop]).finally(() => {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort!);
  });
}
