/** Retries grow 1 s, 2 s, 4 s, … up to an hour, each shortened by up to half at random (jitter). */
export function retryDelay(attempts: number, random = Math.random()): number {
  const base = Math.min(1000 * 2 ** Math.max(0, attempts - 1), 3_600_000);
  return base * (0.5 + random * 0.5);
}

/** The next attempt after `attempts`, or undefined when it would fall past `windowStart + maxAgeMs`. */
export function nextAttempt(attempts: number, windowStart: Date, maxAgeMs: number, now = Date.now()): Date | undefined {
  const at = now + retryDelay(attempts);
  return at > new Date(windowStart).getTime() + maxAgeMs ? undefined : new Date(at);
}

/**
 * A failed attempt, tried again on the schedule unless that would fall past the row's
 * maximum age (or `deadline`): then it is given up, keeping what else the engine recorded.
 */
export function retryOrGiveUp<R extends { kind: "retry"; at: Date; error: string }>(
  failed: R,
  attempts: number,
  windowStart: Date,
  maxAgeMs: number,
  deadline?: Date,
): R | (Omit<R, "kind" | "at"> & { kind: "failed" }) {
  const at = nextAttempt(attempts, windowStart, maxAgeMs);
  if (at && (!deadline || at < deadline)) return { ...failed, at };
  const { kind: _retry, at: _at, ...kept } = failed;
  return { ...kept, kind: "failed", error: `${failed.error} (gave up after ${attempts} attempts)` };
}
