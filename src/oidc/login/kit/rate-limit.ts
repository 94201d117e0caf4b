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
  const wait = perIp.refusal(`${instanceId} ${what} ${req.socket?.remoteAddress ?? ""}`);
  if (wait === undefined) return true;
  res.setHeader("retry-after", String(wait));
  return false;
}

/**
 * A try counted against an address and then against a person (or a login name): undefined
 * when both allow it, else the seconds to wait for the one that refused (the person is not
 * charged when the address refused).
 */
export function refusedTry(guards: { perIp: WindowLimiter; perLoginName: WindowLimiter }, byAddress: string, byPerson: string): number | undefined {
  return guards.perIp.refusal(byAddress) ?? guards.perLoginName.refusal(byPerson);
}
