import type { Db } from "../../../store/db.js";

/**
 * Where a message's links point: the instance's primary domain, with the scheme and port of
 * the service's external URL (as every instance is served: PLATFORM_EXTERNAL_URL's host is
 * the first instance's domain, the others answer on the same port under their own names).
 */
export class InstanceLinks {
  readonly #scheme: string;
  readonly #port: string;

  constructor(externalUrl: URL, tls: boolean) {
    this.#scheme = tls ? "https:" : externalUrl.protocol;
    this.#port = externalUrl.port;
  }

  async baseUrl(db: Db, instanceId: string): Promise<string> {
    const row = await db
      .selectFrom("instance_domains")
      .select("domain")
      .where("instance_id", "=", instanceId)
      .where("is_primary", "=", true)
      .executeTakeFirst();
    const host = row?.domain ?? "localhost";
    return `${this.#scheme}//${host}${this.#port ? `:${this.#port}` : ""}`;
  }
}
