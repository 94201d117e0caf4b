import { randomFillSync } from "node:crypto";

/** Filled 4 KiB at a time: one call into OpenSSL per 128 tokens. */
const POOL_SIZE = 4096;
const pool = Buffer.allocUnsafeSlow(POOL_SIZE);
let offset = POOL_SIZE;

/**
 * `n` bytes from the system's CSPRNG, as crypto.randomBytes gives them, but taken from a
 * pool filled in one call: on the machines measured (docs/benchmarks.md) each randomBytes
 * call cost 4 µs alone and up to 20 µs under load, and every write draws an ID and often a
 * token. Node's own randomUUID pools the same way. Bytes handed out are zeroed in the pool,
 * so none of them stays behind in memory once used.
 */
export function randomBytesPooled(n: number): Buffer {
  if (n > POOL_SIZE / 4) return randomFillSync(Buffer.allocUnsafe(n));
  if (offset + n > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = Buffer.from(pool.subarray(offset, offset + n));
  pool.fill(0, offset, offset + n);
  offset += n;
  return out;
}
