/**
 * Counts the changes that can alter who may do what: an instance blocked, deleted or given
 * another domain, an organization deactivated or deleted, a user locked, a membership
 * changed. Caches of such decisions (the Host's instance, the caller behind a token)
 * remember the count they were filled at and refill once it moved. This process advances it
 * after its own commits; changes of other processes arrive by PostgreSQL's LISTEN/NOTIFY
 * (store/pg/change-listener.ts). While that channel is down, `reliable` is false and the
 * caches must not serve at all: a missed notification must not leave a stale answer.
 */
export class AccessEpoch {
  #value = 0;
  reliable = true;

  get value(): number {
    return this.#value;
  }

  advance(): void {
    this.#value++;
  }
}

/** The channel every process listens on; the payload carries nothing. */
export const ACCESS_CHANNEL = "platform_access_changed";
