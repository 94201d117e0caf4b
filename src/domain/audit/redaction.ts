import { SHOWN_PATHS } from "./shown-payloads.js";

/** Every event type the redaction declares (shown-payloads.ts), sorted. */
export const REDACTED_EVENT_TYPES: readonly string[] = [...SHOWN_PATHS.keys()].sort();

/** The payload paths an event type shows; none for a type nobody declared. */
export function shownPaths(eventType: string): readonly string[] {
  return SHOWN_PATHS.get(eventType) ?? [];
}

/**
 * An event's payload as the audit log shows it: only what its type declares, nested as in
 * the payload. A type nobody declared shows nothing (`{}`): a new event type stays silent
 * until someone decides what of it is safe to show.
 */
export function redactedPayload(eventType: string, payload: unknown): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const path of shownPaths(eventType)) copyPath(payload, shown, path.split("."));
  return shown;
}

function copyPath(from: unknown, to: Record<string, unknown>, [name, ...rest]: string[]): void {
  if (!isObject(from) || name === undefined || !Object.hasOwn(from, name)) return;
  const value = from[name];
  if (rest.length === 0) {
    to[name] = value;
    return;
  }
  // A nested object appears only with something shown in it.
  const nested = isObject(to[name]) ? to[name] : {};
  copyPath(value, nested, rest);
  if (Object.keys(nested).length > 0) to[name] = nested;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
