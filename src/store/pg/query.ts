import pg from "pg";

/**
 * The columns of a statement's rows: their names and text parsers, learned once from the
 * server's RowDescription.
 */
interface RowShape {
  names: string[];
  parsers: Array<(text: string) => unknown>;
}

/** How pg turns a parameter into its text (pg/lib/utils.js), as its own prepare binds them. */
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils.prepareValue;

/** pg's wire connection, as far as a statement uses it (pg/lib/connection.js). */
interface WireConnection {
  parsedStatements: Record<string, string | undefined>;
  bind(config: { portal: string; statement: string; values: unknown[] | undefined; binary: boolean | undefined; valueMapper: unknown }): void;
  sync(): void;
}

/** pg.Query's members that it does not declare in its types (pg 8.23, lib/query.js). */
interface QueryInternals {
  name: string | undefined;
  portal: string;
  values: unknown[] | undefined;
  binary: boolean | undefined;
  rows: number | undefined;
  /** `_types`: the client's, which client.query sets before it submits the query. */
  _result: { rows: unknown[]; _types: TypeParsers | undefined };
  _canceledDueToError: unknown;
  handleError(error: unknown, connection: WireConnection): void;
  _getRows(connection: WireConnection, rows: number | undefined): void;
}

/** pg.Query's own handling, which each method below falls back to. */
const pgQuery = pg.Query.prototype as unknown as {
  prepare(connection: WireConnection): void;
  handleRowDescription(message: unknown): void;
  handleDataRow(message: unknown): void;
};

/** pg-protocol's RowDescription field. */
interface FieldDescription {
  name: string;
  dataTypeID: number;
  format: string;
}

/**
 * The row shapes of the named statements a connection has described: a named statement
 * always has the same text (statement-names.ts), so its rows keep their shape for the life of
 * the connection. (A table changed under it makes PostgreSQL refuse the statement outright,
 * "cached plan must not change result type", and the driver discards the connection.)
 */
const shapesByConnection = new WeakMap<WireConnection, Map<string, RowShape>>();

function shapesOf(connection: WireConnection): Map<string, RowShape> {
  let shapes = shapesByConnection.get(connection);
  if (shapes === undefined) {
    shapes = new Map();
    shapesByConnection.set(connection, shapes);
  }
  return shapes;
}

/** A client's type parsers (the pool's `types`), or pg's. */
interface TypeParsers {
  getTypeParser(oid: number, format: "text"): (text: string) => unknown;
}

/**
 * Undefined for a binary column, and for a column named `__proto__` (a plain object's
 * assignment would set its prototype instead): those keep pg's own row parsing.
 */
function shapeOf(fields: FieldDescription[], types: TypeParsers): RowShape | undefined {
  const names = new Array<string>(fields.length);
  const parsers = new Array<(text: string) => unknown>(fields.length);
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.format !== "text" || field.name === "__proto__") return undefined;
    names[i] = field.name;
    parsers[i] = types.getTypeParser(field.dataTypeID, "text");
  }
  return { names, parsers };
}

/**
 * One statement of the extended protocol (Parse once per connection when named, then Bind,
 * Execute, Sync), with two costs of pg.Query taken out:
 * - A named statement whose rows this connection has seen is executed without a Describe:
 *   PostgreSQL then sends no RowDescription for each execution, and pg does not rebuild the
 *   column parsers from it (about 14 µs of a GetTarget, issue 21 step 6).
 * - Rows are plain objects filled in column order, so that every row of a shape shares one
 *   hidden class. pg copies each row from a prototype-less template, which makes it a
 *   dictionary: slow to build and slower to read.
 * Statements without parameters and a name go by the simple protocol and stay pg's in full
 * (they may hold several statements, each with its own RowDescription).
 */
export class StatementQuery<R extends pg.QueryResultRow> extends pg.Query<R> {
  /** This query as pg's own code sees it. */
  private readonly self = this as unknown as QueryInternals;
  private shape: RowShape | undefined;
  /** Where the shape goes once described: a named statement's connection's. */
  private shapes: Map<string, RowShape> | undefined;
  /** Sent by the extended protocol: one statement, one RowDescription at most. */
  private extended = false;

  constructor(text: string, values: unknown[] | undefined, name: string | undefined, callback: (error: Error | undefined, result: pg.QueryResult<R>) => void) {
    super(text, values, callback as unknown as ConstructorParameters<typeof pg.Query<R>>[2]);
    if (name !== undefined) this.self.name = name;
  }

  /**
   * pg calls this for the extended protocol only (requiresPreparation). It is pg's prepare
   * without the Describe when the rows' shape is known; a failed bind is handled as pg does.
   */
  prepare(connection: WireConnection): void {
    const { self } = this;
    this.extended = true;
    if (self.name !== undefined) {
      this.shapes = shapesOf(connection);
      // Only after a Parse that completed: the statement exists on the server.
      if (connection.parsedStatements[self.name] !== undefined) this.shape = this.shapes.get(self.name);
    }
    if (this.shape === undefined) {
      pgQuery.prepare.call(this, connection);
      return;
    }
    try {
      connection.bind({ portal: self.portal, statement: self.name!, values: self.values, binary: self.binary, valueMapper: prepareValue });
    } catch (error) {
      connection.sync();
      self.handleError(error, connection);
      return;
    }
    self._getRows(connection, self.rows);
  }

  handleRowDescription(message: { fields: FieldDescription[] }): void {
    const shape = this.extended ? shapeOf(message.fields, this.self._result._types ?? pg.types) : undefined;
    if (shape === undefined) {
      pgQuery.handleRowDescription.call(this, message);
      return;
    }
    this.shape = shape;
    if (this.self.name !== undefined) this.shapes?.set(this.self.name, shape);
  }

  handleDataRow(message: { fields: Array<string | null> }): void {
    const { self, shape } = this;
    if (shape === undefined) {
      pgQuery.handleDataRow.call(this, message);
      return;
    }
    if (self._canceledDueToError) return;
    const { names, parsers } = shape;
    const values = message.fields;
    const row: Record<string, unknown> = {};
    try {
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        row[names[i]!] = value === null ? null : parsers[i]!(value!);
      }
    } catch (error) {
      self._canceledDueToError = error;
      return;
    }
    self._result.rows.push(row);
  }
}
