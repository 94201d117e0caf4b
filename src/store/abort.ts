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
      unsubscribe?.();
      reject(error);
    };
    const onAbort = () => giveUp(abortReason(signal!));
    const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => giveUp(opts.timeoutError!()), opts.timeoutMs);
    let unsubscribe: (() => void) | undefined;
    work.then(
      (value) => {
        if (settled) return opts.onLate?.(value);
        settled = true;
        clearTimeout(timer);
        unsubscribe?.();
        resolve(value);
      },
      (error: unknown) => giveUp(error as Error),
    );
    if (signal?.aborted) onAbort();
    else if (signal) unsubscribe = onAbortOf(signal, onAbort);
  });
}

/** The waits of each signal still listening for its abort. */
const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Runs `fn` when the signal aborts, until the returned function is called. One listener per
 * signal, registered with its first wait: a request waits for a connection and then for each
 * statement, and an EventTarget listener added and removed for each wait cost more than the
 * rest of the wait's bookkeeping.
 */
function onAbortOf(signal: AbortSignal, fn: () => void): () => void {
  const waits = waiting.get(signal) ?? listen(signal);
  waits.add(fn);
  return () => void waits.delete(fn);
}

function listen(signal: AbortSignal): Set<() => void> {
  const waits = new Set<() => void>();
  waiting.set(signal, waits);
  signal.addEventListener(
    "abort",
    () => {
      for (const wait of [...waits]) wait();
      waits.clear();
    },
    { once: true },
  );
  return waits;
}
