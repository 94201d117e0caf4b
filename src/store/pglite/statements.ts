import { parse, protocol, type PGlite, type Results } from "@electric-sql/pglite";
import { prepareValue } from "pg/lib/utils.js";
import { StatementNames } from "../pg/statement-names.js";
import { isStalePlan } from "../pg/statements.js";

const { serialize } = protocol;

/**
 * Statements on PGlite in one exchange each, with the texts the service runs often prepared
 * once. PGlite's own `query` makes six calls into the database for one statement (parse,
 * describe, bind, describe, execute, sync) and parses and plans its text every time: a
 * lookup by key cost 220 µs of CPU that way, and a join with a subquery 1.1 ms, most of it
 * PostgreSQL's parser and planner inside WebAssembly. Here a statement is one call (bind,
 * describe, execute, sync; with the parse when it is not prepared), and the names come from
 * the same StatementNames as on PostgreSQL, so both databases prepare the same statements:
 * 140 µs and 280 µs. Values are serialized by pg's own `prepareValue`, as the pg driver
 * sends them (text, parameter types inferred by the server; buffers in binary), so a value
 * means the same on both databases. A statement without parameters is one simple query.
 */
export class PGliteStatements {
  private readonly names: StatementNames;
  /** Names prepared in this database (PGlite is one session: a name, once parsed, stays). */
  private readonly prepared = new Set<string>();

  constructor(
    private readonly pglite: PGlite,
    preparedMax: number,
  ) {
    this.names = new StatementNames(preparedMax);
  }

  async run<R>(sql: string, parameters: readonly unknown[]): Promise<Results<R>> {
    if (parameters.length === 0) return this.exchange<R>([serialize.query(sql)]);
    const values = parameters.map(prepareValue);
    const name = this.names.nameOf(sql, parameters.length);
    try {
      return await this.execute<R>(sql, values, name);
    } catch (error) {
      // Its table changed shape since it was prepared (a test's `alter table`; migrations run
      // before the service's statements): it is prepared again at its next run, as on a
      // fresh PostgreSQL connection, and at once when no transaction was aborted by the failure.
      if (name === undefined || !isStalePlan(error)) throw error;
      this.prepared.delete(name);
      if (this.pglite.isInTransaction()) throw error;
      return this.execute<R>(sql, values, name);
    }
  }

  private async execute<R>(sql: string, values: (string | Buffer | null)[], name: string | undefined): Promise<Results<R>> {
    if (name !== undefined && !this.prepared.has(name)) {
      // Alone, so that a text that does not parse leaves no name behind; the close drops a
      // stale statement of that name (closing one that does not exist is no error).
      await this.pglite.execProtocol(Buffer.concat([serialize.close({ type: "S", name }), serialize.parse({ name, text: sql }), serialize.sync()]));
      this.prepared.add(name);
    }
    return this.exchange<R>([
      ...(name === undefined ? [serialize.parse({ text: sql })] : []),
      serialize.bind({ statement: name ?? "", values }),
      serialize.describe({ type: "P" }),
      serialize.execute({}),
      serialize.sync(),
    ]);
  }

  private async exchange<R>(messages: Uint8Array[]): Promise<Results<R>> {
    const { messages: answer } = await this.pglite.execProtocol(Buffer.concat(messages));
    const results = parse.parseResults(answer, this.pglite.parsers);
    return results[results.length - 1] as Results<R>;
  }
}
