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
 * Runs `start` unless the signal has fired, and rejects as soon as it fires or `timeoutMs`
 * passes; `onLate` receives the result that arrived after giving up, so that a connection
 * obtained too late can be handed back.
 */
export function boundedWait<T>(
  start: () => Promise<T>,
  opts: { signal: AbortSignal | undefined; timeoutMs: number; timeoutError: () => Error; onLate: (value: T) => void },
): Promise<T> {
  const { signal } = opts;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = () => {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      if (settled) return;
      finish();
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      if (settled) return;
      finish();
      reject(opts.timeoutError());
    }, opts.timeoutMs);
    signal?.addEventListener("abort", onAbort, { once: true });
    start().then(
      (value) => {
        if (settled) return opts.onLate(value);
        finish();
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        finish();
        reject(error);
      },
    );
  });
}
