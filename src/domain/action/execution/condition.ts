import type { ExecutionRow } from "../../../store/schema.js";
import { invalidArgument } from "../../errors.js";

/** What an execution's condition matches: a request, a response, a function or an event. */
export type ConditionType = ExecutionRow["condition_type"];

/** When an execution triggers. Its id is derived from it, one execution per condition. */
export type Condition =
  | { type: "request" | "response"; method: string }
  | { type: "request" | "response"; service: string }
  | { type: "request" | "response"; all: true }
  | { type: "function"; name: string }
  | { type: "event"; event: string }
  | { type: "event"; group: string }
  | { type: "event"; all: true };

/**
 * `request/<package>.<Service>/<Method>`, `request/<package>.<Service>`, `request`, the
 * same for `response`, `function/<name>`, `event/<name>`, `event/<group>.*`, `event`.
 */
export function conditionId(c: Condition): string {
  if ("method" in c) return `${c.type}${c.method}`;
  if ("service" in c) return `${c.type}/${c.service}`;
  if ("name" in c) return `function/${c.name}`;
  if ("event" in c) return `event/${c.event}`;
  if ("group" in c) return `event/${c.group}.*`;
  return c.type;
}

export function isConditionId(id: string): boolean {
  try {
    parseConditionId(id);
    return true;
  } catch {
    return false;
  }
}

export function parseConditionId(id: string): Condition {
  const slash = id.indexOf("/");
  const type = (slash < 0 ? id : id.slice(0, slash)) as ConditionType;
  const rest = slash < 0 ? "" : id.slice(slash + 1);
  switch (type) {
    case "request":
    case "response":
      if (rest === "") return { type, all: true };
      return rest.includes("/") ? { type, method: `/${rest}` } : { type, service: rest };
    case "function":
      if (rest !== "") return { type, name: rest };
      break;
    case "event":
      if (rest === "") return { type, all: true };
      return rest.endsWith(".*") ? { type, group: rest.slice(0, -2) } : { type, event: rest };
  }
  throw invalidArgument(`"${id}" is not an execution id`);
}
