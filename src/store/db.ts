import type { Kysely, Transaction } from "kysely";
import type { Database } from "./schema.js";

/**
 * The database handle and a transaction of it, by the tables' types: what nearly every
 * module of the domain and the engines takes. Apart from the appends (append.ts), so that
 * a reader of rows imports no writer of events.
 */
export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
