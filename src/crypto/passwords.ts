import { scrypt, type ScryptOptions } from "node:crypto";
import { constantTimeEqual } from "./equal.js";
import { promisify } from "node:util";
import { hash as argon2Hash, verify as argon2Verify, type Algorithm } from "@node-rs/argon2";
import { verify as bcryptVerify } from "@node-rs/bcrypt";

/** Argon2id cost of new hashes; defaults are OWASP's (docs/passwords.md). */
export interface Argon2Params {
  memoryKiB: number;
  iterations: number;
  parallelism: number;
}

export interface PasswordHasher {
  /** A PHC `$argon2id$v=19$…` string with a fresh 16-byte salt. */
  hash(password: string): Promise<string>;
  /**
   * needsRehash is true only after a match, when the hash is not Argon2id at least as strong
   * as the configured params: the caller then stores `hash(password)` in its place.
   * Throws PasswordHashFormatError for a string that is no supported hash at all.
   */
  verify(encoded: string, password: string): Promise<{ ok: boolean; needsRehash: boolean }>;
}

/** Its message is meant for the importing user; it never repeats the hash. */
export class PasswordHashFormatError extends Error {
  override name = "PasswordHashFormatError";
}

type ParsedHash =
  | { algorithm: "argon2id" | "argon2i"; memoryKiB: number; iterations: number; parallelism: number }
  | { algorithm: "bcrypt"; cost: number }
  | { algorithm: "scrypt"; logN: number; r: number; p: number; salt: Buffer; hash: Buffer };

const MAX_HASH_LENGTH = 512;

/**
 * Import caps: an imported hash is paid for on every login attempt, so each cap keeps one
 * verification under about 2 s of one libuv thread and 1 GiB of memory (measurements in
 * docs/passwords.md). Hashes made here from the configuration are not held to them.
 */
const IMPORT_CAPS = {
  argon2MemoryKiB: 1024 * 1024,
  /** memory × passes: admits libsodium's SENSITIVE preset (1 GiB, t=4). */
  argon2MemoryPassesKiB: 4 * 1024 * 1024,
  argon2Parallelism: 16,
  bcryptCost: 15,
  /** N·r·p, which also holds scrypt's 128·N·r bytes to 1 GiB: ln=20,r=8,p=1 at most. */
  scryptWork: 2 ** 23,
  scryptBlockSize: 32,
  scryptParallelism: 16,
} as const;

// The package's Algorithm is a const enum with no runtime object; the annotation checks the value.
const ARGON2ID: Algorithm.Argon2id = 2;

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: ScryptOptions) => Promise<Buffer>;

export function createPasswordHasher(params: Argon2Params): PasswordHasher {
  return {
    hash: (password) =>
      argon2Hash(password, {
        algorithm: ARGON2ID,
        memoryCost: params.memoryKiB,
        timeCost: params.iterations,
        parallelism: params.parallelism,
      }),
    async verify(encoded, password) {
      const parsed = parse(encoded);
      const ok = await matches(parsed, encoded, password);
      return { ok, needsRehash: ok && isWeakerThan(parsed, params) };
    },
  };
}

export function checkImportableHash(encoded: string): { algorithm: ParsedHash["algorithm"] } {
  const parsed = parse(encoded);
  checkImportCaps(parsed);
  return { algorithm: parsed.algorithm };
}

/** Every library used here compares in constant time but scrypt, which is ours to do. */
async function matches(parsed: ParsedHash, encoded: string, password: string): Promise<boolean> {
  switch (parsed.algorithm) {
    case "argon2id":
    case "argon2i":
      return argon2Verify(encoded, password);
    case "bcrypt":
      return bcryptVerify(password, encoded);
    case "scrypt": {
      const derived = await scryptAsync(password, parsed.salt, parsed.hash.length, {
        N: 2 ** parsed.logN,
        r: parsed.r,
        p: parsed.p,
        // OpenSSL refuses above maxmem (node's default: 32 MiB); the import cap is what bounds it.
        maxmem: scryptMemoryBytes(parsed),
      });
      return constantTimeEqual(derived, parsed.hash);
    }
  }
}

function isWeakerThan(parsed: ParsedHash, params: Argon2Params): boolean {
  return (
    parsed.algorithm !== "argon2id" || parsed.memoryKiB < params.memoryKiB || parsed.iterations < params.iterations || parsed.parallelism < params.parallelism
  );
}

const ARGON2 = /^\$(argon2id|argon2i)\$v=(\d+)\$m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,10})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;
// The last character of the salt and of the hash carries unused bits, which must be zero:
// otherwise neither OpenBSD's bcrypt nor ours ever matches the hash.
const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{21}[.Oeu][./A-Za-z0-9]{30}[.CGKOSWaeimquy26]$/;
const SCRYPT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,10}),p=(\d{1,10})\$([A-Za-z0-9+/]*)\$([A-Za-z0-9+/]+)$/;

/** Checks what the algorithms themselves require; the import caps come on top. */
function parse(encoded: string): ParsedHash {
  if (encoded.length > MAX_HASH_LENGTH) {
    throw new PasswordHashFormatError(`a password hash has at most ${MAX_HASH_LENGTH} characters, this one has ${encoded.length}`);
  }
  if (encoded.startsWith("$argon2")) return parseArgon2(encoded);
  if (encoded.startsWith("$2")) return parseBcrypt(encoded);
  if (encoded.startsWith("$scrypt$")) return parseScrypt(encoded);
  throw new PasswordHashFormatError("unsupported password hash: expected $argon2id$, $argon2i$, bcrypt ($2a$, $2b$, $2y$) or $scrypt$ (passlib's format)");
}

function parseArgon2(encoded: string): ParsedHash {
  if (encoded.startsWith("$argon2d$")) {
    throw new PasswordHashFormatError("argon2d password hashes are not supported, only argon2id and argon2i");
  }
  const match = ARGON2.exec(encoded);
  if (!match) {
    throw new PasswordHashFormatError("an argon2 hash must read $argon2id$v=19$m=<KiB>,t=<iterations>,p=<parallelism>$<salt>$<hash>, in unpadded base64");
  }
  if (match[2] !== "19") throw new PasswordHashFormatError(`argon2 version v=${match[2]} is not supported, only v=19`);
  const parsed = {
    algorithm: match[1] as "argon2id" | "argon2i",
    memoryKiB: Number(match[3]),
    iterations: Number(match[4]),
    parallelism: Number(match[5]),
  };
  if (parsed.parallelism < 1 || parsed.iterations < 1 || parsed.memoryKiB < 8 * parsed.parallelism) {
    throw new PasswordHashFormatError("argon2 needs p ≥ 1, t ≥ 1 and m ≥ 8·p KiB");
  }
  base64("argon2 salt", match[6]!, 8, 64);
  base64("argon2 hash", match[7]!, 16, 64);
  return parsed;
}

function parseBcrypt(encoded: string): ParsedHash {
  const match = BCRYPT.exec(encoded);
  if (!match) {
    throw new PasswordHashFormatError("a bcrypt hash must read $2a$, $2b$ or $2y$, a two-digit cost, $ and 53 characters of bcrypt's base64");
  }
  const cost = Number(match[1]);
  if (cost < 4 || cost > 31) throw new PasswordHashFormatError(`bcrypt cost must be from 04 to 31, not ${match[1]}`);
  return { algorithm: "bcrypt", cost };
}

function parseScrypt(encoded: string): ParsedHash {
  const match = SCRYPT.exec(encoded);
  if (!match) {
    throw new PasswordHashFormatError("an scrypt hash must read $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>, in unpadded base64 (passlib's format)");
  }
  const [logN, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (logN < 1 || r < 1 || p < 1) throw new PasswordHashFormatError("scrypt needs ln ≥ 1, r ≥ 1 and p ≥ 1");
  return { algorithm: "scrypt", logN, r, p, salt: base64("scrypt salt", match[4]!, 0, 64), hash: base64("scrypt hash", match[5]!, 16, 64) };
}

function checkImportCaps(parsed: ParsedHash): void {
  const over = (what: string, limit: number | string) => new PasswordHashFormatError(`${what} is over the import limit of ${limit}`);
  switch (parsed.algorithm) {
    case "argon2id":
    case "argon2i":
      if (parsed.memoryKiB > IMPORT_CAPS.argon2MemoryKiB) throw over(`argon2 memory m=${parsed.memoryKiB} KiB`, `${IMPORT_CAPS.argon2MemoryKiB} KiB`);
      if (parsed.memoryKiB * parsed.iterations > IMPORT_CAPS.argon2MemoryPassesKiB) {
        throw over(`argon2 m×t=${parsed.memoryKiB * parsed.iterations} KiB`, `${IMPORT_CAPS.argon2MemoryPassesKiB} KiB`);
      }
      if (parsed.parallelism > IMPORT_CAPS.argon2Parallelism) throw over(`argon2 parallelism p=${parsed.parallelism}`, IMPORT_CAPS.argon2Parallelism);
      return;
    case "bcrypt":
      if (parsed.cost > IMPORT_CAPS.bcryptCost) throw over(`bcrypt cost ${parsed.cost}`, IMPORT_CAPS.bcryptCost);
      return;
    case "scrypt": {
      if (parsed.r > IMPORT_CAPS.scryptBlockSize) throw over(`scrypt r=${parsed.r}`, IMPORT_CAPS.scryptBlockSize);
      if (parsed.p > IMPORT_CAPS.scryptParallelism) throw over(`scrypt p=${parsed.p}`, IMPORT_CAPS.scryptParallelism);
      const work = 2 ** parsed.logN * parsed.r * parsed.p;
      if (work > IMPORT_CAPS.scryptWork) throw over(`scrypt N·r·p=${work}`, `${IMPORT_CAPS.scryptWork} (2^23)`);
    }
  }
}

/** What OpenSSL allocates and checks against maxmem. */
function scryptMemoryBytes({ logN, r, p }: { logN: number; r: number; p: number }): number {
  return 128 * r * (2 ** logN + p + 2);
}

/**
 * Strict unpadded base64 (the patterns check the alphabet): Buffer ignores stray trailing
 * bits, the argon2 library rejects them, and an import must not pass that a login fails.
 */
function base64(what: string, text: string, minBytes: number, maxBytes: number): Buffer {
  const bytes = Buffer.from(text, "base64");
  if (bytes.toString("base64").replace(/=+$/, "") !== text) throw new PasswordHashFormatError(`${what} is not valid base64`);
  if (bytes.length < minBytes || bytes.length > maxBytes) {
    throw new PasswordHashFormatError(`${what} must be ${minBytes} to ${maxBytes} bytes, not ${bytes.length}`);
  }
  return bytes;
}
