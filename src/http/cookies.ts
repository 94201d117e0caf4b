import { parseCookie, stringifySetCookie } from "cookie";
import type { NodeResponse } from "./respond.js";

/**
 * Cookies of the login pages, parsed and written by jshttp's `cookie` (the parser Express and
 * Koa use): RFC 6265 quoting, attribute order and the edge cases of real Cookie headers are
 * not ours to get right again. Every cookie we set is HttpOnly and SameSite=Lax, Secure when
 * the page is served under https.
 */

export function readCookie(header: string | undefined, name: string): string | undefined {
  return header ? parseCookie(header)[name] : undefined;
}

export interface CookieOptions {
  path: string;
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  secure: boolean;
}

export function setCookieValue(name: string, value: string, o: CookieOptions): string {
  return stringifySetCookie({ name, value, path: o.path, maxAge: o.maxAge, httpOnly: true, sameSite: "lax", secure: o.secure });
}

/** Adds a Set-Cookie line to those the response already carries. */
export function appendSetCookie(res: NodeResponse, line: string): void {
  const before = res.getHeader("set-cookie");
  res.setHeader("set-cookie", [...(before === undefined ? [] : Array.isArray(before) ? before : [String(before)]), line]);
}
