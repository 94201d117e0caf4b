import type { CallResult, Protocol } from "./clients.js";

/** A short token per protocol that names carry in protocol-matrix scenarios, so that names never contain each other. */
export const PROTOCOL_TOKEN: Record<Protocol, string> = { grpc: "ga", "grpc-web": "gw", connect: "cn", "connect-h2": "ch", rest: "rs" };

/** Keys whose values differ between runs of one scenario whatever the protocol. */
const VOLATILE = new Set(["changeDate", "timestamp", "processedSequence"]);

/**
 * What must agree across protocols: the result with every generated id replaced by its name
 * (`<org>`), times and global positions by "*", and `<prefix><token>` by `<prefix><p>`.
 * `alsoVolatile` names further keys that differ per run (sequences of a shared aggregate).
 */
export function comparable(result: CallResult, ids: Record<string, string>, opts: { prefix?: string; alsoVolatile?: readonly string[] } = {}): unknown {
  if (!result.ok) return { code: result.code };
  const names = new Map(Object.entries(ids).map(([k, v]) => [v, `<${k}>`]));
  const volatile = new Set([...VOLATILE, ...(opts.alsoVolatile ?? [])]);
  const text = JSON.stringify(result.message, (key, value: unknown) =>
    typeof value === "string" && names.has(value) ? names.get(value) : volatile.has(key) ? "*" : value,
  );
  const tokens = opts.prefix && new RegExp(`${opts.prefix}(${Object.values(PROTOCOL_TOKEN).join("|")})`, "g");
  return JSON.parse(tokens ? text.replace(tokens, `${opts.prefix}<p>`) : text);
}
