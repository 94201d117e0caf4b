import { Code, ConnectError } from "@connectrpc/connect";
import type { ExecutionMode, TargetKind } from "../../domain/action/target/model.js";
import { OutboundError, type OutboundClient } from "../../http/outbound.js";
import { SIGNATURE_HEADER, signatureHeader } from "./signature.js";

/** A target as a call needs it: where, how long, how its answer counts, and its keys. */
export interface CallableTarget {
  id: string;
  name: string;
  kind: TargetKind;
  url: string;
  timeoutMs: number;
  mode: ExecutionMode;
  /** The current signing key first; the previous one too while its grace period lasts. */
  keys: string[];
}

export type TargetOutcome =
  | { ok: true; status: number; body: Buffer }
  /** `error` is what the caller may see; `reason` is for the log only; `status` when the target answered; `forwarded`: the error is the target's own (a 4xx it forwarded). */
  | { ok: false; error: ConnectError; reason: string; status?: number; forwarded?: boolean };

/**
 * HTTP statuses a target may forward to the caller, as the codes the gateway maps back to
 * them (src/gateway/rpc-status.ts); any other 4xx is a failed precondition.
 */
const FORWARDED: Record<number, Code> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  409: Code.AlreadyExists,
  412: Code.FailedPrecondition,
  429: Code.ResourceExhausted,
  499: Code.Canceled,
};

export const EXECUTION_FAILED = "execution failed";

/**
 * One call: POST the JSON body, signed, through the outbound client (its address rules,
 * no redirects, the size limit), bounded by the target's timeout. A 2xx answer whose body
 * forwards a 4xx status and message becomes that error for the caller; anything else that
 * is not a 2xx answer fails, saying which target and why in words an administrator can act
 * on (never its URL, key or answer; the log has the details).
 */
export async function callTarget(outbound: OutboundClient, target: CallableTarget, body: string): Promise<TargetOutcome> {
  let status: number;
  let answer: Buffer;
  try {
    ({ status, body: answer } = await outbound.request(target.url, {
      method: "POST",
      headers: { "content-type": "application/json", [SIGNATURE_HEADER]: signatureHeader(body, target.keys) },
      body,
      timeoutMs: target.timeoutMs,
    }));
  } catch (error) {
    if (!(error instanceof OutboundError)) return failedCall(target, "could not be called", String(error));
    return failedCall(target, OUTBOUND_WHY[error.failure](error, target), `${error.failure}: ${error.message}`);
  }
  if (status < 200 || status > 299) return { ...failedCall(target, `answered HTTP ${status}`, `answered HTTP ${status}`), status };
  const forwarded = forwardedError(answer);
  if (forwarded) return { ok: false, error: forwarded, reason: `forwarded HTTP error: ${forwarded.rawMessage}`, status, forwarded: true };
  return { ok: true, status, body: answer };
}

/** Why a call did not get an answer, for the caller: the kind of failure, never the address. */
const OUTBOUND_WHY: Record<OutboundError["failure"], (error: OutboundError, target: CallableTarget) => string> = {
  refused: () => "has an internal address, which PLATFORM_OUTBOUND_ALLOW_PRIVATE does not allow",
  timeout: (_, target) => `did not answer within its timeout of ${target.timeoutMs} ms`,
  too_large: () => "answered more than the size limit allows",
  invalid_url: () => "has a URL that cannot be called",
  network: (error) => `could not be reached${error.code ? ` (${error.code})` : ""}`,
};

/** A failed call: the caller's error names the target and what went wrong; `reason` is the log's. */
export function failedCall(target: Pick<CallableTarget, "id" | "name">, why: string, reason: string): Extract<TargetOutcome, { ok: false }> {
  return { ok: false, error: new ConnectError(`${EXECUTION_FAILED}: target "${target.name}" (${target.id}) ${why}`, Code.FailedPrecondition), reason };
}

function forwardedError(answer: Buffer): ConnectError | undefined {
  if (answer.length === 0 || answer[0] !== 0x7b /* { */) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.toString("utf8"));
  } catch {
    return undefined;
  }
  const { forwardedStatusCode: status, forwardedErrorMessage: message } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 400 || status > 499) return undefined;
  return new ConnectError(typeof message === "string" ? message.slice(0, 1000) : "", FORWARDED[status] ?? Code.FailedPrecondition);
}
