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
