import { isIP } from "node:net";

/** Readers of environment variables: each refuses a bad value with a ConfigError naming it. */

export class ConfigError extends Error {
  override name = "ConfigError";
}

export const HOUR_MS = 3_600_000;

export function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, not "${raw}"`);
  }
  return value;
}

export function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(`${name} must be true or false, not "${raw}"`);
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: HOUR_MS };

/** Go-style durations, as operators of identity servers write them: `8760h`, `90m`, `1h30m`, `20s`. */
function parseDuration(raw: string): number | undefined {
  const parts = [...raw.matchAll(/(\d+)(ms|h|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== raw) return undefined;
  return parts.reduce((ms, [, n, unit]) => ms + Number(n) * UNIT_MS[unit!]!, 0);
}

/** Tokens live at most this long (domain/expiration.ts): 87660h. */
export const TEN_YEARS_MS = 87_660 * 3_600_000;

export function duration(env: NodeJS.ProcessEnv, name: string, fallback: string, max = Infinity, min = 1000): number {
  const raw = env[name] || fallback;
  const ms = parseDuration(raw);
  if (ms === undefined || ms < min || ms > max) {
    throw new ConfigError(
      `${name} must be a duration of at least ${min >= 1000 ? `${min / 1000}s` : `${min}ms`}${max < Infinity ? ` and at most ${max / 3_600_000}h` : ""} such as 8760h, 30m or 20s, not "${raw}"`,
    );
  }
  return ms;
}

/** `host:port`, `[::1]:port` or empty for off. */
export function hostPort(env: NodeJS.ProcessEnv, name: string, fallback: string): { host: string; port: number } | undefined {
  const raw = env[name] ?? fallback;
  if (raw.trim() === "") return undefined;
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(raw.trim());
  const port = Number(match?.[3]);
  if (!match || port > 65535) throw new ConfigError(`${name} must be host:port (or empty to turn it off), not "${raw}"`);
  return { host: match[1] ?? match[2]!, port };
}

export function url(env: NodeJS.ProcessEnv, name: string, fallback: string): URL {
  const raw = env[name] || fallback;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error();
    return parsed;
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, not "${raw}"`);
  }
}

/** An http(s) URL that paths are appended to: without its trailing slash. */
export const baseUrl = (env: NodeJS.ProcessEnv, name: string, fallback: string) => url(env, name, fallback).href.replace(/\/+$/, "");

/**
 * Comma-separated DNS servers as node:dns `setServers` takes them: `ip`, `ip:port`,
 * `[ipv6]:port` (a bare IPv6 address means port 53). Addresses only: a server's own name
 * would need a resolver first. Unset or empty: undefined (the system's servers).
 */
export function dnsServers(env: NodeJS.ProcessEnv, name: string, max = 16): string[] | undefined {
  const raw = env[name] ?? "";
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) return undefined;
  if (items.length > max) throw new ConfigError(`${name} names ${items.length} DNS servers; at most ${max}`);
  return items.map((item) => {
    const match = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(item) ?? /^([0-9.]+):(\d{1,5})$/.exec(item);
    const [address, port] = match ? [match[1]!, Number(match[2])] : [item, 53];
    if (isIP(address) === 0 || port < 1 || port > 65535) {
      throw new ConfigError(`${name} must list DNS servers as ip, ip:port or [ipv6]:port separated by commas, not "${item}"`);
    }
    return isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
  });
}
