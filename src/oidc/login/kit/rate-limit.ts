import type { WindowLimiter } from "../../../http/window-limiter.js";

/**
 * Takes one of a client address's tries at `what` in an instance (codes are guessed by
 * trying, and forms that send mail must not flood a mailbox); when none is left, the answer
 * gets its Retry-After and this says false.
 */
export function takeAddressTry(
  perIp: WindowLimiter,
  req: { socket?: { remoteAddress?: string | undefined } | null },
  res: { setHeader(name: string, value: string): unknown },
  instanceId: string,
  what: string,
): boolean {
  if (perIp.take(`${instanceId} ${what} ${req.socket?.remoteAddress ?? ""}`)) return true;
  res.setHeader("retry-after", String(perIp.retryAfterS()));
  return false;
}
