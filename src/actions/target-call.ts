import { Code, ConnectError } from "@connectrpc/connect";
import type { ExecutionMode, TargetKind } from "../store/schema.js";
import { OutboundError, type OutboundClient } from "../http/outbound.js";
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
  /** `error` is what the caller may see; `reason` is for the log only; `status` when the target answered. */
  | { ok: false; error: ConnectError; reason: string; status?: number };

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
 * is not a 2xx answer fails without telling the caller more than that it failed.
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
    const reason = error instanceof OutboundError ? `${error.failure}: ${error.message}` : String(error);
    return failed(reason);
  }
  if (status < 200 || status > 299) return { ...failed(`answered HTTP ${status}`), status };
  const forwarded = forwardedError(answer);
  if (forwarded) return { ok: false, error: forwarded, reason: `forwarded HTTP error: ${forwarded.rawMessage}`, status };
  return { ok: true, status, body: answer };
}

function failed(reason: string): TargetOutcome {
  return { ok: false, error: new ConnectError(EXECUTION_FAILED, Code.FailedPrecondition), reason };
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
