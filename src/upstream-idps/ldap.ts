import { readFileSync } from "node:fs";
import { lookup } from "node:dns/promises";
import { connect as netConnect, isIP } from "node:net";
import { connect as tlsConnect, rootCertificates, type ConnectionOptions } from "node:tls";
import { Client, InvalidCredentialsError, type Entry } from "ldapts";
import { isInternalAddress } from "../http/outbound.js";
import type { ExternalProfileJson } from "../domain/idp-intent/model.js";
import { UpstreamError } from "./fetch.js";

/**
 * Sign-in with an LDAP directory (docs/api.md, "LDAP"): bind as the provider's account,
 * search the user's entry by the login name, bind as that entry with the person's password.
 * Certificates are always verified, against Node's CA store (which NODE_EXTRA_CA_CERTS
 * extends) and the provider's own root CA.
 */

export interface LdapConfig {
  servers: string[];
  startTls?: boolean;
  baseDn: string;
  bindDn: string;
  userBase?: string;
  userObjectClasses: string[];
  userFilters: string[];
  /** proto3 JSON of a Duration: "5s", "1.500s". */
  timeout?: string;
  rootCa?: string;
  attributes: {
    idAttribute: string;
    usernameAttribute?: string;
    emailAttribute?: string;
    firstNameAttribute?: string;
    lastNameAttribute?: string;
    preferredLanguageAttribute?: string;
    phoneAttribute?: string;
  };
}

export interface LdapSettings {
  /** PLATFORM_LDAP_MAX_TIMEOUT: a provider's timeout, and the one of a provider without. */
  maxTimeoutMs: number;
  /** PLATFORM_OUTBOUND_ALLOW_PRIVATE: servers configured through the API may be internal. */
  allowPrivate: boolean;
}

/** The person as the other types' ExternalUser (clients.ts) describes them. */
type LdapUser = ExternalProfileJson & { id: string };

/**
 * What the directory said of a login name and password: the person, or no. Why not is for the
 * audit log only: the person sees one message for both.
 */
export type LdapSignIn = { ok: true; user: LdapUser; raw: Record<string, unknown> } | { ok: false; reason: "unknown_name" | "wrong_password" };

/**
 * RFC 4515 3: the characters that would end or widen an assertion value (`*`, `(`, `)`, `\`
 * and NUL) as `\` and two hex digits, so a login name is matched as the text it is.
 */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** The search for a login name: every object class, and any of the filter attributes equal to it. */
export function userFilter(config: Pick<LdapConfig, "userObjectClasses" | "userFilters">, loginName: string): string {
  const value = escapeFilterValue(loginName);
  const classes = config.userObjectClasses.map((c) => `(objectClass=${escapeFilterValue(c)})`).join("");
  const any = config.userFilters.map((a) => `(${a}=${value})`).join("");
  return `(&${classes}(|${any}))`;
}

/** userBase relative to baseDn (ou=people), or already a DN under it. */
export function searchBase(config: Pick<LdapConfig, "baseDn" | "userBase">): string {
  const userBase = (config.userBase ?? "").trim();
  if (!userBase) return config.baseDn;
  const norm = (dn: string) => dn.replace(/\s*([,=])\s*/g, "$1").toLowerCase();
  return norm(userBase).endsWith(norm(config.baseDn)) ? userBase : `${userBase},${config.baseDn}`;
}

/** A proto3 JSON Duration ("5s", "0.250s") in ms, capped; absent: the cap. */
export function timeoutMs(timeout: string | undefined, maxMs: number): number {
  const seconds = timeout ? Number(timeout.replace(/s$/, "")) : NaN;
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(Math.ceil(seconds * 1000), maxMs) : maxMs;
}

const extraCerts = new Map<string, string[]>();

/**
 * Node's CA store as a connection without `ca` trusts it: the bundled roots and the file of
 * NODE_EXTRA_CA_CERTS, which `tls.rootCertificates` leaves out (Node reads it once at start;
 * so does this, per path). Giving `ca` replaces that store: a provider's rootCa is added to it.
 */
function nodeCaStore(): string[] {
  const path = process.env.NODE_EXTRA_CA_CERTS;
  if (!path) return [...rootCertificates];
  let extra = extraCerts.get(path);
  if (!extra) {
    try {
      extra = readFileSync(path, "utf8").match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    } catch {
      // As Node does with a file it cannot read: a warning at start, the bundled roots only.
      extra = [];
    }
    extraCerts.set(path, extra);
  }
  return [...rootCertificates, ...extra];
}

interface Target {
  url: string;
  tls: ConnectionOptions;
}

/**
 * Where to connect for a server: an address checked against the outbound rules unless allowed
 * (as the outbound client and SMTP do), the connection pinned to it so that no second DNS
 * answer swaps an internal one in, the certificate still verified against the configured name.
 */
async function targetOf(server: string, config: LdapConfig, settings: LdapSettings): Promise<Target> {
  const url = new URL(server);
  const secure = url.protocol === "ldaps:";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = url.port || (secure ? "636" : "389");
  const ca = config.rootCa ? [...nodeCaStore(), config.rootCa] : undefined;
  const tls: ConnectionOptions = { rejectUnauthorized: true, minVersion: "TLSv1.2", ...(ca && { ca }) };
  let address = host;
  if (isIP(host) === 0) {
    if (!settings.allowPrivate) {
      let found;
      try {
        found = await lookup(host, { all: true });
      } catch (error) {
        throw new UpstreamError("unreachable", `${host} could not be resolved (${(error as NodeJS.ErrnoException).code ?? "DNS error"})`);
      }
      const internal = found.find((a) => isInternalAddress(a.address));
      if (internal) throw new UpstreamError("refused", `${host} resolves to the internal address ${internal.address}`);
      address = found[0]!.address;
    }
    // SNI and the certificate's name: the configured one, whatever address it resolved to.
    tls.servername = host;
  } else {
    if (!settings.allowPrivate && isInternalAddress(host)) throw new UpstreamError("refused", `${host} is an internal address`);
    // An address literal: the certificate must name the address (checked against `host`).
    tls.host = host;
  }
  const shown = isIP(address) === 6 ? `[${address}]` : address;
  return { url: `${secure ? "ldaps" : "ldap"}://${shown}:${port}`, tls };
}

function clientFor(target: Target, ms: number): Client {
  return new Client({
    url: target.url,
    timeout: ms,
    connectTimeout: ms,
    // Only for ldaps://: ldapts takes any TLS options to mean TLS from the first byte.
    ...(target.url.startsWith("ldaps:") && { tlsOptions: target.tls }),
    // ldapts passes (port, host, options) for ldaps:// and (options) for StartTLS: the
    // verification settings go with both.
    createSecureConnection: ((...args: unknown[]) =>
      typeof args[0] === "number"
        ? tlsConnect({ port: args[0], host: args[1] as string, ...target.tls, ...(args[2] as ConnectionOptions) })
        : tlsConnect({ ...target.tls, ...(args[0] as ConnectionOptions) })) as typeof tlsConnect,
    createConnection: ((port: number, host: string) => netConnect({ port, host })) as typeof netConnect,
  });
}

/** Why a server could not be used, for the log: its message without the bind password, which no error of ldapts carries. */
const reason = (error: unknown) => (error instanceof Error ? error.message.split("\n")[0]! : String(error));

/**
 * Checks a login name and password against the directory, the servers in order: one that
 * cannot be reached (or times out) passes to the next; one that answers decides. Throws
 * UpstreamError when none could be used or the provider's own account is refused.
 */
export async function ldapSignIn(config: LdapConfig, bindPassword: string, loginName: string, password: string, settings: LdapSettings): Promise<LdapSignIn> {
  // An empty password is an unauthenticated bind (RFC 4513 5.1.2), which many servers let succeed.
  if (loginName === "") return { ok: false, reason: "unknown_name" };
  if (password === "") return { ok: false, reason: "wrong_password" };
  const ms = timeoutMs(config.timeout, settings.maxTimeoutMs);
  const failures: string[] = [];
  for (const server of config.servers) {
    let target: Target;
    try {
      target = await targetOf(server, config, settings);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      failures.push(`${server}: ${error.message}`);
      continue;
    }
    const client = clientFor(target, ms);
    let stage = "connect";
    try {
      if (config.startTls && target.url.startsWith("ldap:")) {
        stage = "starttls";
        // A copy: ldapts adds the plain socket to the options it is given.
        await client.startTLS({ ...target.tls });
      }
      stage = "bind";
      try {
        await client.bind(config.bindDn, bindPassword);
      } catch (error) {
        if (error instanceof InvalidCredentialsError) throw new UpstreamError("invalid", `${server} refused the provider's bind account`);
        throw error;
      }
      stage = "search";
      const wanted = Object.values(config.attributes).filter((a): a is string => typeof a === "string" && a !== "");
      const { searchEntries } = await client.search(searchBase(config), {
        scope: "sub",
        filter: userFilter(config, loginName),
        attributes: wanted,
        // Two: a name that matches more than one entry signs no one in.
        sizeLimit: 2,
        timeLimit: Math.ceil(ms / 1000),
      });
      if (searchEntries.length !== 1) return { ok: false, reason: "unknown_name" };
      const entry = searchEntries[0]!;
      stage = "user bind";
      try {
        await client.bind(entry.dn, password);
      } catch (error) {
        if (error instanceof InvalidCredentialsError) return { ok: false, reason: "wrong_password" };
        throw error;
      }
      return profileOf(entry, config);
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      failures.push(`${server} (${stage}): ${reason(error)}`);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }
  throw new UpstreamError("unreachable", `no LDAP server could be used: ${failures.join("; ")}`);
}

function profileOf(entry: Entry, config: LdapConfig): LdapSignIn {
  const first = (attribute: string | undefined): string => {
    if (!attribute) return "";
    const key = Object.keys(entry).find((k) => k.toLowerCase() === attribute.toLowerCase());
    const value = key === undefined ? undefined : entry[key];
    const one = Array.isArray(value) ? value[0] : value;
    if (one === undefined) return "";
    return (Buffer.isBuffer(one) ? one.toString("hex") : String(one)).trim().slice(0, 200);
  };
  const a = config.attributes;
  const id = first(a.idAttribute);
  if (!id) throw new UpstreamError("invalid", `the user's entry has no ${a.idAttribute}`);
  const givenName = first(a.firstNameAttribute);
  const familyName = first(a.lastNameAttribute);
  const email = first(a.emailAttribute);
  const user: LdapUser = {
    id,
    username: first(a.usernameAttribute) || email,
    email,
    // A directory's mail attribute is whatever was typed into it: nobody verified it.
    emailVerified: false,
    givenName,
    familyName,
    displayName: `${givenName} ${familyName}`.trim(),
    preferredLanguage: first(a.preferredLanguageAttribute).toLowerCase().split(/[-_]/)[0] ?? "",
    phone: first(a.phoneAttribute),
  };
  const raw: Record<string, unknown> = { dn: entry.dn };
  for (const [key, value] of Object.entries(entry)) {
    if (key !== "dn") raw[key] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return { ok: true, user, raw };
}
