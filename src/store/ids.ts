import { randomBytesPooled } from "../crypto/random.js";

/**
 * Time-ordered 128-bit ids in UUIDv7 layout (RFC 9562): unique across processes without
 * coordination, and sorting by id follows creation time.
 */
export function newId(): string {
  const bytes = randomBytesPooled(16);
  const ms = Date.now();
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
