/*
 * The settings APIs' convention (platform/settings/object/v3alpha): a Set message carries
 * only the properties it changes, each as `set` or `reset`; a Resolved one gives every
 * property's value in effect. A form of settings sends what its person changed and nothing
 * else, so the properties left alone stay inherited.
 */

export interface SetChange<V> {
  change: { case: "set"; value: V };
}

export interface ResetChange {
  change: { case: "reset"; value: true };
}

/** What a form's values set: the properties whose value differs from the one in effect. */
export function setChanges<V extends object>(values: V, inEffect: V): { [K in keyof V]?: SetChange<V[K]> } {
  const changes: { [K in keyof V]?: SetChange<V[K]> } = {};
  for (const name of Object.keys(values) as (keyof V)[]) {
    if (values[name] !== inEffect[name]) changes[name] = { change: { case: "set", value: values[name] } };
  }
  return changes;
}

/** The Set message that takes one property's own value away: the parent's applies again. */
export function resetChange<K extends string>(name: K): Record<K, ResetChange> {
  return { [name]: { change: { case: "reset", value: true } } } as Record<K, ResetChange>;
}
