import { durationFromMs } from "@bufbuild/protobuf/wkt";
import type { GetTarget } from "../../../../gen/platform/resources/action/v3alpha/target_pb";

/**
 * A target as its form holds it, and back: what kind of call (a webhook whose answer is not
 * read, or a call whose answer replaces the request or response), where, how long to wait,
 * and whether the call waits for it, ignores it, or fails with it.
 */
export interface TargetValues {
  name: string;
  kind: "restWebhook" | "restRequestResponse";
  url: string;
  timeoutSeconds: string;
  mode: "sync" | "async" | "interrupt";
}

export const KINDS = [
  { value: "restWebhook", label: "Webhook: the call's answer is not read" },
  { value: "restRequestResponse", label: "Request/response: the answer replaces what was sent" },
];
export const MODES = [
  { value: "sync", label: "Wait for it; carry on if it fails" },
  { value: "interrupt", label: "Wait for it; fail the call if it fails" },
  { value: "async", label: "Do not wait" },
];

export const EMPTY_TARGET: TargetValues = { name: "", kind: "restWebhook", url: "", timeoutSeconds: "10", mode: "sync" };

export function targetValues(t: GetTarget | undefined): TargetValues {
  const target = t?.target;
  const type = target?.targetType;
  const mode =
    target?.executionType.case === "isAsync" && target.executionType.value
      ? "async"
      : target?.executionType.case === "interruptOnError" && target.executionType.value
        ? "interrupt"
        : "sync";
  return {
    name: target?.name ?? "",
    kind: type?.case === "restRequestResponse" ? "restRequestResponse" : "restWebhook",
    url: type?.value?.url ?? "",
    timeoutSeconds: String(Number(target?.timeout?.seconds ?? 10n)),
    mode,
  };
}

/** The fields a CreateTarget or PatchTarget request carries for these values. */
export function targetFields(v: TargetValues) {
  return {
    name: v.name.trim(),
    targetType: { case: v.kind, value: { url: v.url.trim() } },
    timeout: durationFromMs(Number(v.timeoutSeconds) * 1000),
    executionType: v.mode === "async" ? { case: "isAsync" as const, value: true } : { case: "interruptOnError" as const, value: v.mode === "interrupt" },
  };
}

export const TIMEOUT_RULES = { required: "Give a timeout.", pattern: { value: /^(?:[1-9]\d?|1\d\d|2[0-6]\d|270)$/, message: "Whole seconds from 1 to 270." } };
export const URL_RULES = { required: "Give the URL to call.", pattern: { value: /^https?:\/\/\S+$/, message: "An http or https URL." } };
