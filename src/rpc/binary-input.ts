import { fromBinary, ScalarType, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import { brotliDecompressSync, gunzipSync } from "node:zlib";

/**
 * connect-node parses binary request bodies before any interceptor runs, and reports one that
 * does not decode as Internal with the parser's own words. This checks each binary message
 * as its bytes arrive, before connect sees the last of them, and fails the body with
 * InvalidArgument: a generic message, or the field whose text is not UTF-8. What connect then
 * reports is that error, on every protocol.
 */
export function checkBinaryBody(body: AsyncIterable<Uint8Array>, header: Headers, input: DescMessage, maxBytes: number): AsyncIterable<Uint8Array> {
  const type = (header.get("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  const framing = FRAMING[type];
  if (!framing) return body;
  const encoding = (header.get(framing.encodingHeader) ?? "identity").trim().toLowerCase();
  const check = (bytes: Uint8Array, compressed: boolean) => checkMessage(input, compressed ? decompress(bytes, encoding, maxBytes) : bytes);
  return framing.enveloped ? checkEnvelopes(body, check, maxBytes) : checkWhole(body, check, maxBytes);
}

const FRAMING: Record<string, { enveloped: boolean; encodingHeader: string }> = {
  "application/grpc": { enveloped: true, encodingHeader: "grpc-encoding" },
  "application/grpc+proto": { enveloped: true, encodingHeader: "grpc-encoding" },
  "application/grpc-web": { enveloped: true, encodingHeader: "grpc-encoding" },
  "application/grpc-web+proto": { enveloped: true, encodingHeader: "grpc-encoding" },
  "application/connect+proto": { enveloped: true, encodingHeader: "connect-content-encoding" },
  "application/proto": { enveloped: false, encodingHeader: "content-encoding" },
};

type Check = (bytes: Uint8Array, compressed: boolean) => void;

/** Enveloped protocols: each message is a 5-byte prefix (flags, length) and its bytes. */
async function* checkEnvelopes(body: AsyncIterable<Uint8Array>, check: Check, maxBytes: number): AsyncIterable<Uint8Array> {
  // Chunks not yet checked; joined only once a whole envelope has arrived, so a large message
  // arriving in many chunks is copied once, not once per chunk.
  let parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    parts.push(chunk);
    size += chunk.length;
    while (size >= 5) {
      const head = parts[0]!.length >= 5 ? parts[0]! : Buffer.concat(parts);
      const flags = head[0]!;
      const length = Buffer.from(head.buffer, head.byteOffset, head.length).readUInt32BE(1);
      // Oversized messages are connect's to refuse (ResourceExhausted); stop looking.
      if (length > maxBytes) return yield* passRest(chunk, body);
      if (size < 5 + length) break;
      const pending = Buffer.concat(parts, size);
      // Flag 0x80 marks an end-of-stream frame, not a message.
      if ((flags & 0x80) === 0) check(pending.subarray(5, 5 + length), (flags & 0x01) === 1);
      const rest = pending.subarray(5 + length);
      parts = rest.length > 0 ? [rest] : [];
      size = rest.length;
    }
    yield chunk;
  }
}

async function* passRest(current: Uint8Array, body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  yield current;
  for await (const chunk of body) yield chunk;
}

/** Connect unary: the whole body is the message, compressed as its content-encoding says. */
async function* checkWhole(body: AsyncIterable<Uint8Array>, check: Check, maxBytes: number): AsyncIterable<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    chunks.push(chunk);
    if (size > maxBytes) {
      yield* chunks;
      return yield* passRest(new Uint8Array(0), body);
    }
  }
  const whole = Buffer.concat(chunks);
  if (whole.length > 0) check(whole, true);
  yield whole;
}

function decompress(bytes: Uint8Array, encoding: string, maxBytes: number): Uint8Array {
  if (encoding === "identity") return bytes;
  try {
    if (encoding === "gzip") return gunzipSync(bytes, { maxOutputLength: maxBytes });
    if (encoding === "br") return brotliDecompressSync(bytes, { maxOutputLength: maxBytes });
  } catch {
    throw new ConnectError(`the request body is not valid ${encoding}`, Code.InvalidArgument);
  }
  // An encoding we do not accept: connect answers that one itself.
  return new Uint8Array(0);
}

function checkMessage(input: DescMessage, bytes: Uint8Array): void {
  parseBinaryRequest(input, bytes);
}

/** A binary request message, or the InvalidArgument error checkBinaryBody would fail its body with. */
export function parseBinaryRequest(input: DescMessage, bytes: Uint8Array): Message {
  try {
    return fromBinary(input, bytes);
  } catch {
    const field = nonUtf8Field(input, bytes, []);
    throw new ConnectError(
      field ? `invalid request: ${field} is not valid UTF-8 text` : `the request body is not a valid ${input.typeName} message`,
      Code.InvalidArgument,
    );
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Finds the (dotted path of the) first string field whose bytes are not UTF-8; undefined if none or unreadable. */
function nonUtf8Field(desc: DescMessage, bytes: Uint8Array, path: string[]): string | undefined {
  try {
    const reader = new BinaryReader(bytes);
    while (reader.pos < reader.len) {
      const [number, wireType] = reader.tag();
      const field = desc.fields.find((f) => f.number === number);
      if (!field || wireType !== WireType.LengthDelimited) {
        reader.skip(wireType, number);
        continue;
      }
      const found = nonUtf8In(field, reader.bytes(), [...path, field.name]);
      if (found) return found;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

function nonUtf8In(field: DescField, data: Uint8Array, path: string[]): string | undefined {
  const kind = field.fieldKind === "list" ? field.listKind : field.fieldKind;
  if (kind === "message" && field.message) return nonUtf8Field(field.message, data, path);
  if (kind === "scalar" && field.scalar === ScalarType.STRING && !isUtf8(data)) return path.join(".");
  if (field.fieldKind === "map") {
    // An entry is a small message: key 1, value 2.
    const key = field.mapKey === ScalarType.STRING;
    const entry = new BinaryReader(data);
    while (entry.pos < entry.len) {
      const [n, wt] = entry.tag();
      if (wt !== WireType.LengthDelimited) {
        entry.skip(wt, n);
        continue;
      }
      const part = entry.bytes();
      if (n === 1 && key && !isUtf8(part)) return `${path.join(".")} (a key)`;
      if (n === 2 && field.mapKind === "message") {
        const found = nonUtf8Field(field.message, part, path);
        if (found) return found;
      }
      if (n === 2 && field.mapKind === "scalar" && field.scalar === ScalarType.STRING && !isUtf8(part)) return path.join(".");
    }
  }
  return undefined;
}

function isUtf8(data: Uint8Array): boolean {
  try {
    utf8.decode(data);
    return true;
  } catch {
    return false;
  }
}
