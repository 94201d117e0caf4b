import { statementName } from "../prepared.js";

/**
 * How often a parameterized statement runs unnamed before it is prepared on the server:
 * once is an admin's or a migration's statement, a few times is a path the service takes.
 */
const PREPARE_AFTER = 3;

/**
 * Server-side names for the statements a process runs often (what pgjdbc does with its
 * prepareThreshold). Each unnamed statement is parsed and planned by PostgreSQL on every
 * execution; a sign-in's join cost it 0.7 ms of CPU that way, and most of the service's
 * statements are built by Kysely on the spot, not through store/prepared.ts. Once a
 * parameterized statement's text has run PREPARE_AFTER times, it gets a name that the pg
 * driver prepares once per connection; PostgreSQL then plans it with custom plans for its
 * first executions and keeps a generic plan only where that costs no more. Statements of
 * store/prepared.ts keep their own names. At most `max` texts are named (each costs every
 * connection that runs it a cached plan in its backend, a few kilobytes to tens of them),
 * and the counts of texts not yet named are forgotten now and then, so that neither map
 * grows without bound. A name always stands for the same text, in every connection.
 */
export class StatementNames {
  private readonly named = new Map<string, string>();
  private readonly seen = new Map<string, number>();

  constructor(private readonly max: number) {}

  nameOf(sql: string, parameterCount: number): string | undefined {
    const explicit = statementName(sql);
    if (explicit !== undefined) return explicit;
    const named = this.named.get(sql);
    if (named !== undefined || parameterCount === 0 || this.named.size >= this.max) return named;
    const count = (this.seen.get(sql) ?? 0) + 1;
    if (count < PREPARE_AFTER) {
      if (this.seen.size >= 4 * this.max) this.seen.clear();
      this.seen.set(sql, count);
      return undefined;
    }
    this.seen.delete(sql);
    const name = `auto_${this.named.size + 1}`;
    this.named.set(sql, name);
    return name;
  }
}
