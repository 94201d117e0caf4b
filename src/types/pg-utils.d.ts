/**
 * pg exports `lib/*` but its types (@types/pg) do not describe lib/utils.js, whose
 * `prepareValue` turns a JavaScript value into what pg sends for a parameter. The PGlite
 * driver serializes with it so that a value means the same on both databases.
 */
declare module "pg/lib/utils.js" {
  /** Text (null for SQL null), or a Buffer for bytes, which go in binary format. */
  export function prepareValue(value: unknown): string | Buffer | null;
}
