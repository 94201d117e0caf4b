import nodemailer, { type Transporter } from "nodemailer";
import type { SendableProvider } from "./provider.js";
import { transportOptions, type SmtpOptions } from "./smtp-transport.js";

export interface SmtpPoolOptions extends SmtpOptions {
  /** Transports kept; past it the least recently used is closed (PLATFORM_SMTP_POOL_SIZE). */
  maxTransports: number;
  /** Connections each transport opens at most (PLATFORM_SMTP_MAX_CONNECTIONS). */
  maxConnections: number;
}

interface Entry {
  id: string;
  transport: Promise<Transporter>;
}

/**
 * Pooled SMTP connections, one nodemailer pool per provider and version: a changed provider
 * gets a new pool and its old one is closed, so no message goes out with settings that no
 * longer hold. Idle connections close by themselves (nodemailer's idle timeout).
 */
export class SmtpPool {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly options: SmtpPoolOptions) {}

  transport(provider: SendableProvider): Promise<Transporter> {
    const key = `${provider.id}@${provider.version}`;
    const found = this.#entries.get(key);
    if (found) {
      // Most recently used last: the first entry is the one to close when the pool is full.
      this.#entries.delete(key);
      this.#entries.set(key, found);
      return found.transport;
    }
    this.close(provider.id);
    while (this.#entries.size >= this.options.maxTransports) this.#drop(this.#entries.keys().next().value!);
    // No requeue of a message whose connection closed under it: the worker retries it, with a
    // whole deadline (a requeued one runs out of time mid-send, and its retry may send it twice).
    const transport = transportOptions(provider, this.options).then((options) =>
      nodemailer.createTransport({ ...options, pool: true, maxConnections: this.options.maxConnections, maxRequeues: 0 }),
    );
    // A destination that cannot be resolved or is refused is tried afresh next time.
    transport.catch(() => this.#entries.get(key)?.transport === transport && this.#entries.delete(key));
    this.#entries.set(key, { id: provider.id, transport });
    return transport;
  }

  /** Closes every version's connections of a provider (changed, deactivated or deleted). */
  close(id: string): void {
    for (const [key, entry] of this.#entries) if (entry.id === id) this.#drop(key);
  }

  closeAll(): void {
    for (const key of [...this.#entries.keys()]) this.#drop(key);
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    this.#entries.delete(key);
    entry?.transport.then(
      (t) => t.close(),
      () => {},
    );
  }
}
