import { clone, fromJson, toJson, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import type { Interceptor, UnaryRequest } from "@connectrpc/connect";
import { PlatformActions } from "../../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import type { ExecutionPlans } from "../../engines/actions/plans.js";
import { callTarget, failedCall, type CallableTarget } from "../../engines/actions/target-call.js";
import type { FeatureFlags } from "../../domain/feature/flags.js";
import type { OutboundClient } from "../../http/outbound.js";
import type { Logger } from "../../log/logger.js";
import type { Store } from "../../store/database.js";
import { orgKey, principalKey, systemKey, tenantKey } from "../context.js";

export interface ExecutionDeps {
  store: Pick<Store, "forRequest">;
  plans: ExecutionPlans;
  outbound: OutboundClient;
  flags: FeatureFlags;
  logger: Logger;
}

/**
 * Caller headers a target may see: what describes the client and the route, never its
 * credentials (no Authorization, no cookies), as canonical names with lists of values.
 */
const FORWARDED_HEADERS = [
  "Accept-Language",
  "User-Agent",
  "X-Forwarded-For",
  "X-Forwarded-Host",
  "X-Forwarded-Proto",
  "Forwarded",
  "X-Request-Id",
  "Traceparent",
];

/**
 * Request and response executions (spec: Execution, "Webhook call to a target"): the targets
 * of the most specific execution for the method (method, else service, else all) are called
 * one after another before the handler with the request, and after it with the response.
 * It sits after authorization and before validation: a request a target rewrote is
 * validated as if the caller had sent it. Part of the one handler path, so every protocol
 * and every service gets it. Nothing runs while the instance's `actions` flag is off.
 */
export function executionInterceptor(deps: ExecutionDeps): Interceptor {
  return (next) => async (req) => {
    const tenant = req.contextValues.get(tenantKey);
    if (req.stream || !tenant || req.contextValues.get(systemKey)) return next(req);
    if (!(await deps.flags.forInstance(tenant.id)).actions) return next(req);
    const fullMethod = `/${req.service.typeName}/${req.method.name}`;
    const { db } = deps.store.forRequest(req.signal);
    const candidates = (type: "request" | "response") => [`${type}${fullMethod}`, `${type}/${req.service.typeName}`, type];
    const [before, after] = await Promise.all([
      deps.plans.targets(db, tenant.id, candidates("request")),
      deps.plans.targets(db, tenant.id, candidates("response")),
    ]);
    if (before.length === 0 && after.length === 0) return next(req);

    const principal = req.contextValues.get(principalKey);
    const context = {
      fullMethod,
      instanceID: tenant.id,
      ...optional("orgID", req.contextValues.get(orgKey)?.id ?? principal?.orgId),
      ...optional("userID", principal?.userId),
      ...optional("headers", headersOf(req)),
    };
    const log = deps.logger.child({ method: fullMethod, instance: tenant.id });
    // The actions service's own calls are seen (an audit trail sees executions change) but
    // never stopped nor rewritten: a broken target must not lock the administrator out of
    // the calls that repair it.
    const guarded = req.service.typeName === PlatformActions.typeName;

    let request = req.message;
    for (const target of before) {
      const replaced = await run(deps, log, guarded, target, req.method.input, request, () => ({ ...context, request: jsonOf(req.method.input, request) }));
      if (replaced) request = replaced;
    }
    if (request !== req.message) (req as { message: Message }).message = request;
    const res = await next(req);
    if (after.length === 0 || res.stream) return res;

    let response = res.message;
    for (const target of after) {
      const replaced = await run(deps, log, guarded, target, req.method.output, response, () => ({
        ...context,
        request: jsonOf(req.method.input, request),
        response: jsonOf(req.method.output, response),
      }));
      if (replaced) response = replaced;
    }
    if (response !== res.message) (res as { message: Message }).message = response;
    return res;
  };
}

/**
 * One target's turn. Async targets are sent without waiting and change nothing; a failing
 * synchronous target stops the call only when it interrupts on error, else it is logged
 * and the chain goes on with the message as it was. A `rest_request_response` target's
 * answer replaces the message field by field (proto3 JSON; unknown fields are an error).
 * When `guarded`, every target is called as usual, and only logged: it neither stops the
 * call, whatever its mode, nor replaces the message.
 */
async function run(
  deps: ExecutionDeps,
  log: Logger,
  guarded: boolean,
  target: CallableTarget,
  schema: DescMessage,
  message: Message,
  payload: () => object,
): Promise<Message | undefined> {
  const body = JSON.stringify(payload());
  if (target.mode === "async") {
    void callTarget(deps.outbound, target, body).then((outcome) => {
      if (!outcome.ok) log.warn({ target: target.id, reason: outcome.reason }, "asynchronous target failed");
    });
    return undefined;
  }
  const outcome = await callTarget(deps.outbound, target, body);
  let failure = outcome.ok ? undefined : outcome;
  let replaced: Message | undefined;
  if (outcome.ok && target.kind === "rest_request_response") {
    try {
      replaced = mergedWith(schema, message, outcome.body);
    } catch (error) {
      failure = failedCall(
        target,
        `answered with something that is not a ${schema.typeName} in JSON`,
        `the answer is not a ${schema.typeName} in JSON: ${(error as Error).message}`,
      );
    }
  }
  const interrupting = target.mode === "interrupt_on_error" && !guarded;
  if (!failure) return guarded ? undefined : replaced;
  log.warn({ target: target.id, reason: failure.reason, interrupting }, "target failed");
  if (interrupting) throw failure.error;
  return undefined;
}

function mergedWith(schema: DescMessage, message: Message, answer: Buffer): Message {
  const json = JSON.parse(answer.toString("utf8")) as JsonValue;
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw new Error("expected a JSON object");
  const partial = fromJson(schema, json) as unknown as Record<string, unknown>;
  const result = clone(schema, message) as unknown as Record<string, unknown>;
  // Field by field: what the answer names replaces (a oneof as a whole), what it leaves out stays.
  for (const field of schema.fields) {
    if (!Object.hasOwn(json, field.name) && !Object.hasOwn(json, field.jsonName)) continue;
    const key = field.oneof ? field.oneof.localName : field.localName;
    result[key] = partial[key];
  }
  return result as unknown as Message;
}

/** Proto3 JSON with the proto field names (snake_case), as the spec shows the payload. */
function jsonOf(schema: DescMessage, message: Message): JsonValue {
  return toJson(schema, message, { useProtoFieldName: true });
}

function headersOf(req: UnaryRequest): Record<string, string[]> | undefined {
  const out: Record<string, string[]> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = req.header.get(name);
    if (value !== null)
      out[name] = value
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "");
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function optional<K extends string, V>(key: K, value: V | undefined | ""): Partial<Record<K, V>> {
  return value === undefined || value === "" ? {} : ({ [key]: value } as Record<K, V>);
}
