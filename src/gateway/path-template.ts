import { invalidArgument } from "../domain/errors.js";

/**
 * google.api.http path templates (`/v1/{name=shelves/*}/books/{id}`, `{id=**}`, `:verb`),
 * compiled once into a regular expression with one capture per variable.
 */
export interface PathTemplate {
  readonly source: string;
  /** Dotted field paths of the variables, in capture order. */
  readonly variables: string[];
  /** Literal segments count; more literals means a more specific route. */
  readonly literals: number;
  readonly hasWildcardRest: boolean;
  match(path: string): Map<string, string> | undefined;
}

const LITERAL = /^[A-Za-z0-9._~!$&'()+,;=@-]+$/;

export function parsePathTemplate(source: string): PathTemplate {
  if (!source.startsWith("/")) throw new Error(`path template ${source} must start with /`);
  let rest = source.slice(1);
  let verb = "";
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("}")) {
    verb = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const variables: string[] = [];
  let literals = 0;
  let hasWildcardRest = false;
  const segmentPattern = (segment: string): string => {
    if (segment === "*") return "[^/]+";
    if (segment === "**") {
      hasWildcardRest = true;
      return ".+";
    }
    if (!LITERAL.test(segment)) throw new Error(`bad segment "${segment}" in path template ${source}`);
    literals++;
    return escape(segment);
  };
  const parts: string[] = [];
  for (const token of splitTemplate(rest, source)) {
    if (token.startsWith("{")) {
      const [field, pattern = "*"] = token.slice(1, -1).split("=");
      if (!field || !/^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$/.test(field)) {
        throw new Error(`bad variable ${token} in path template ${source}`);
      }
      variables.push(field);
      parts.push(`(${pattern.split("/").map(segmentPattern).join("/")})`);
    } else {
      parts.push(segmentPattern(token));
    }
  }
  const regex = new RegExp(`^/${parts.join("/")}${verb ? `:${escape(verb)}` : ""}$`);
  return {
    source,
    variables,
    literals,
    hasWildcardRest,
    match(path) {
      const m = regex.exec(path);
      if (!m) return undefined;
      const values = new Map<string, string>();
      variables.forEach((v, i) => values.set(v, decodePathValue(m[i + 1]!)));
      return values;
    },
  };
}

function decodePathValue(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidArgument(`the path segment "${raw}" is not valid percent-encoding`);
  }
}

/** Splits on "/" outside of braces: a variable's pattern may contain slashes. */
function splitTemplate(rest: string, source: string): string[] {
  const tokens: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of rest) {
    if (ch === "{") depth++;
    if (ch === "}") depth--;
    if (depth < 0 || depth > 1) throw new Error(`unbalanced braces in path template ${source}`);
    if (ch === "/" && depth === 0) {
      tokens.push(current);
      current = "";
    } else current += ch;
  }
  if (depth !== 0) throw new Error(`unbalanced braces in path template ${source}`);
  tokens.push(current);
  return tokens;
}

function escape(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
