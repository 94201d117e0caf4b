import type { Logger } from "../../log/logger.js";
import type { SignInRow } from "../../store/sign-in-log.js";
import { SignInBound, type BoundSettings } from "./sign-in-bound.js";
import { attemptRow, summaryRow, type SignInAttempt, type SignInRecorder } from "./sign-ins.js";

/** Every one an environment variable (config.ts, PLATFORM_AUDIT_SIGNIN_*). */
export interface SignInLogSettings extends BoundSettings {
  /** Rows waiting for their write; an attempt beyond is counted into its key's summary instead. */
  buffer: number;
  /** How often the waiting rows are written, and the windows that ended summed up. */
  flushIntervalMs: number;
}

export interface SignInLogDeps {
  settings: SignInLogSettings;
  /** One write of many rows (store/sign-in-log.ts), on the process's database: no request waits for it. */
  write(rows: SignInRow[]): Promise<void>;
  logger: Pick<Logger, "warn">;
}

/**
 * This process's sign-in events. An attempt is taken in memory and the sign-in goes on: the
 * bound (sign-in-bound.ts) decides whether it becomes a row, and the rows wait, at most
 * `buffer` of them, for the next write, every `flushIntervalMs`, one statement for them all
 * with the summaries of the windows that ended. A failed write loses its rows, counted and
 * logged, and never reaches a sign-in. close() sums up every open window and writes what
 * waits: the service calls it at shutdown, once no request is left.
 */
export class SignInLog implements SignInRecorder {
  readonly #bound: SignInBound;
  #waiting: SignInRow[] = [];
  #writing: Promise<void> | undefined;
  readonly #timer: NodeJS.Timeout;
  /** Rows lost to failed writes since the start. */
  lost = 0;

  constructor(private readonly deps: SignInLogDeps) {
    this.#bound = new SignInBound(deps.settings);
    this.#timer = setInterval(() => void this.flush(), deps.settings.flushIntervalMs);
    // close() writes what is left: the timer keeps no process alive.
    this.#timer.unref();
  }

  record(attempt: SignInAttempt): void {
    const now = Date.now();
    // Copied: a caller's user may be a whole row (with a password's hash) that a window would keep alive.
    const user = attempt.user && { id: attempt.user.id, orgId: attempt.user.orgId };
    const keys = { instanceId: attempt.instanceId, ...(user && { user }), ...(attempt.origin.ip !== undefined && { address: attempt.origin.ip }) };
    if (this.#bound.admit(keys, attempt.outcome, now, this.#waiting.length < this.deps.settings.buffer)) this.#waiting.push(attemptRow(attempt, new Date(now)));
  }

  /** Writes what waits and the summaries of ended windows; one write at a time (a slow database makes the next wait, not pile up). */
  flush(): Promise<void> {
    this.#writing ??= this.#write(false).finally(() => (this.#writing = undefined));
    return this.#writing;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#writing;
    await this.#write(true);
  }

  async #write(all: boolean): Promise<void> {
    const now = new Date();
    const rows = [...this.#waiting, ...this.#bound.sweep(now.getTime(), all).map((s) => summaryRow(s, now))];
    this.#waiting = [];
    if (rows.length === 0) return;
    try {
      await this.deps.write(rows);
    } catch (error) {
      this.lost += rows.length;
      this.deps.logger.warn({ err: error, rows: rows.length, lost: this.lost }, "sign-in events could not be written: they are lost");
    }
  }
}
