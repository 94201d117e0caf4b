import type { IncomingHttpHeaders } from "node:http";

/** RFC 9110's token: the characters a header name may have. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * A value may not hold NUL, CR or LF (fetch's rule), nor a character above U+00FF (a WebIDL
 * ByteString's): Node's writeHead refuses them too, after the call, where no error is answered.
 */
const FORBIDDEN_IN_VALUE = /[\0\r\n\u0100-\uffff]/;
/** The whitespace fetch strips from both ends of a value. */
const OUTER_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * The headers of a unary call (request, answer, trailers) as the `Headers` interface that
 * interceptors and handlers use, kept in a Map. The fetch `Headers` (undici's) checks every
 * argument through WebIDL converters and sorts its list on every iteration: about 5–10 µs of
 * a gRPC call's 250 went to the five such objects each call made (issue 21 step 6). Names
 * and values are checked as fetch checks them; iteration is in insertion order (fetch's is
 * sorted; nothing here depends on the order).
 */
export class CallHeaders implements Headers {
  readonly #values = new Map<string, string>();
  /** Set-Cookie values one by one, which a combined value would run together. */
  #cookies: string[] | undefined;

  constructor(init?: Record<string, string>) {
    if (init) for (const name in init) this.set(name, init[name]!);
  }

  /**
   * A request's headers as Node parsed them (names in lower case, names and values checked by
   * its parser), pseudo-headers left out, as connect-node hands them to interceptors.
   */
  static fromIncoming(node: IncomingHttpHeaders): CallHeaders {
    const headers = new CallHeaders();
    for (const key in node) {
      if (key.charCodeAt(0) === 58 /* ":" */) continue;
      const value = node[key];
      if (typeof value === "string") headers.#values.set(key, value);
      else if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    }
    return headers;
  }

  append(name: string, value: string): void {
    const key = checkedName(name);
    const normalized = checkedValue(value);
    const before = this.#values.get(key);
    this.#values.set(key, before === undefined ? normalized : `${before}, ${normalized}`);
    if (key === "set-cookie") (this.#cookies ??= []).push(normalized);
  }

  set(name: string, value: string): void {
    const key = checkedName(name);
    const normalized = checkedValue(value);
    this.#values.set(key, normalized);
    if (key === "set-cookie") this.#cookies = [normalized];
  }

  delete(name: string): void {
    const key = checkedName(name);
    this.#values.delete(key);
    if (key === "set-cookie") this.#cookies = undefined;
  }

  get(name: string): string | null {
    return this.#values.get(checkedName(name)) ?? null;
  }

  has(name: string): boolean {
    return this.#values.has(checkedName(name));
  }

  getSetCookie(): string[] {
    return this.#cookies ? [...this.#cookies] : [];
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [key, value] of this.#values) {
      if (key === "set-cookie" && this.#cookies) for (const cookie of this.#cookies) callback.call(thisArg, cookie, key, this);
      else callback.call(thisArg, value, key, this);
    }
  }

  *entries(): IterableIterator<[string, string]> {
    for (const [key, value] of this.#values) {
      if (key === "set-cookie" && this.#cookies) for (const cookie of this.#cookies) yield [key, cookie];
      else yield [key, value];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

function checkedName(name: string): string {
  if (!TOKEN.test(name)) throw new TypeError(`invalid header name: "${name}"`);
  return name.toLowerCase();
}

/** Tab, LF, CR, space. */
const isWhitespace = (code: number) => code === 9 || code === 10 || code === 13 || code === 32;

function checkedValue(value: string): string {
  let normalized = String(value);
  // Nearly every value has nothing to strip: the regular expression's replace only when there is.
  if (isWhitespace(normalized.charCodeAt(0)) || isWhitespace(normalized.charCodeAt(normalized.length - 1))) {
    normalized = normalized.replace(OUTER_WHITESPACE, "");
  }
  if (FORBIDDEN_IN_VALUE.test(normalized)) throw new TypeError("a header value may not hold NUL, CR, LF or a character above U+00FF");
  return normalized;
}
