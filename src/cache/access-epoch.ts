/**
 * Counts the commits of this process that can end someone's access (an organization
 * deactivated or deleted, a user locked, a membership removed). Caches of access decisions
 * remember the count they were filled at and refill when it moved, so the process that made
 * such a change never serves the old decision; other processes wait out their cache's TTL.
 */
export class AccessEpoch {
  #value = 0;

  get value(): number {
    return this.#value;
  }

  advance(): void {
    this.#value++;
  }
}
