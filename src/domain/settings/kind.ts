import type { ContextRef } from "../context.js";

export type Level = ContextRef["type"];

/** One property of a kind of settings. */
export interface PropertyDefinition {
  /** The contexts it may be set in; empty: fixed by the system. */
  levels: ReadonlySet<Level>;
  /** The value where no context sets one; it counts as the system's. */
  builtIn: unknown;
  /** Refuses a value before it is stored (InvalidArgument). */
  check?(value: unknown): void;
}

/** A value in effect and the context it was set in. */
interface ResolvedValue {
  value: unknown;
  from: ContextRef;
  /** Fixed by the system (no level may set it): its owner is named even when asked there. */
  fixed?: boolean;
}

export type Resolved = Record<string, ResolvedValue>;

/**
 * A kind of settings: its properties and rules. Adding a property is a proto field and a
 * line in its kind's `properties`; storage, resolution and conversion are generic.
 */
export interface SettingsKind {
  /** Name of the kind in storage and events ("language", "feature"). */
  name: string;
  properties: Readonly<Record<string, PropertyDefinition>>;
  /** Refuses effective values after a change in the context changed (FailedPrecondition). */
  checkResolved?(resolved: Resolved, at: ContextRef): void;
  /** Repairs a combination a parent's later change broke below it. */
  adjust?(resolved: Resolved): Resolved;
}

/** What a write does: properties set in the context, and properties it stops setting. */
export interface SettingsChange {
  set: Record<string, unknown>;
  reset: string[];
}
