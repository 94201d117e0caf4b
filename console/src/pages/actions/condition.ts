import type { Condition } from "../../../../gen/platform/resources/action/v3alpha/execution_pb";

/**
 * An execution's condition as a person reads it, and as the create form picks it: a kind
 * (around a call's request or response, in a function of the sign-in, on an event) and
 * which of them, written `all`, `service:<name>`, `method:<path>`, `group:<name>`,
 * `event:<type>` or `function:<name>`.
 */
export type ConditionKind = "request" | "response" | "function" | "event";

export function describeCondition(c: Condition | undefined): string {
  const t = c?.conditionType;
  if (!t?.case) return "—";
  if (t.case === "function") return `Function ${t.value}`;
  const which = t.value.condition;
  const what = which.case === "all" ? "every one" : `${which.case} ${String(which.value)}`;
  return t.case === "event" ? `Events: ${what}` : `${t.case === "request" ? "Request" : "Response"} of calls: ${what}`;
}

export function conditionOf(kind: ConditionKind, which: string) {
  const [part, ...rest] = which.split(":");
  const value = rest.join(":");
  if (kind === "function") return { conditionType: { case: "function" as const, value } };
  const condition =
    part === "all"
      ? { case: "all" as const, value: true }
      : kind === "event"
        ? { case: part as "event" | "group", value }
        : { case: part as "method" | "service", value };
  return { conditionType: { case: kind, value: { condition } } } as { conditionType: { case: ConditionKind; value: never } };
}
