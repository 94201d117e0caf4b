/** The reason the signal gives, as an Error the error mapping understands. */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DatabaseWaitAborted();
}

export class DatabaseWaitAborted extends Error {
  override name = "DatabaseWaitAborted";
  constructor() {
    super("the request was aborted while it waited for the database");
  }
}

/**
 * `work`'s outcome, unless the signal fires or `timeoutMs` passes first: then a rejection at
 * once, while the work runs on. `onLate` receives a result that arrived after giving up (a
 * connection to hand back); a late failure is swallowed, as nobody waits for it any more.
 */
export function boundedWait<T>(
  work: Promise<T>,
  opts: { signal: AbortSignal | undefined; timeoutMs?: number; timeoutError?: () => Error; onLate?: (value: T) => void },
): Promise<T> {
  const { signal } = opts;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const giveUp = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      reject(error);
    };
    const onAbort = () => giveUp(abortReason(signal!));
    const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => giveUp(opts.timeoutError!()), opts.timeoutMs);
    work.then(
      (value) => {
        if (settled) return opts.onLate?.(value);
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => giveUp(error as Error),
    );
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}
