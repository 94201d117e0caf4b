/** Metadata values are bytes: shown as text when they are UTF-8, else said to be binary. */
const strict = new TextDecoder("utf-8", { fatal: true });

/** The value as text, or undefined when its bytes are not UTF-8. */
export function textOf(value: Uint8Array): string | undefined {
  try {
    return strict.decode(value);
  } catch {
    return undefined;
  }
}

/** What a table shows of a value: its text (the start of a long one), or that it is binary and how large. */
export function describeValue(value: Uint8Array): string {
  const text = textOf(value);
  if (text === undefined) return `Binary, ${value.length.toLocaleString()} bytes`;
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The limit of a value in the API, in bytes (of the UTF-8 text typed here). */
export const MAX_VALUE_BYTES = 65536;
export const encode = (text: string) => new TextEncoder().encode(text);
