import type { DnsLookups } from "../dns/lookups.js";
import { OutboundError, type OutboundClient } from "../http/outbound.js";
import { challengeLocations, type ChallengePorts, type PendingValidation } from "../domain/org-domain/validation.js";

/**
 * Looks for a domain's validation token where its owner was told to publish it: the TXT
 * record through the DNS servers of PLATFORM_DNS_SERVERS (else the system's), or the file
 * through the one outbound client (its private-address policy, timeout and size bound),
 * over https and then over plain http, as ZITADEL does. The answer says what was found,
 * for the caller to fix what it published.
 */

export interface ChallengeClients {
  outbound: Pick<OutboundClient, "request">;
  /** Bounds each of the two HTTP calls. */
  outboundTimeoutMs: number;
  dns: DnsLookups;
  ports: ChallengePorts;
}

export type CheckResult = { found: true } | { found: false; finding: string };

/** Records and bodies are shown this long at most: enough to recognise, too short to flood an error. */
const SHOWN = 100;
const shown = (text: string) => JSON.stringify(text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text);

export async function checkChallenge(clients: ChallengeClients, pending: PendingValidation): Promise<CheckResult> {
  return pending.type === "dns" ? checkTxt(clients, pending) : checkFile(clients, pending);
}

async function checkTxt({ dns, ports }: ChallengeClients, pending: PendingValidation): Promise<CheckResult> {
  const [name] = challengeLocations("dns", pending.domain, pending.token, ports) as [string];
  const answer = await dns.txt(name);
  if ("missing" in answer) return { found: false, finding: `no TXT record at ${name}` };
  if ("failed" in answer) return { found: false, finding: `the TXT lookup of ${name} failed: ${answer.failed}` };
  if (answer.records.includes(pending.token)) return { found: true };
  const records = answer.records.slice(0, 5).map(shown).join(", ") + (answer.records.length > 5 ? ` and ${answer.records.length - 5} more` : "");
  return { found: false, finding: `the TXT records at ${name} are ${records}, not the token` };
}

async function checkFile(clients: ChallengeClients, pending: PendingValidation): Promise<CheckResult> {
  const findings: string[] = [];
  for (const url of challengeLocations("http", pending.domain, pending.token, clients.ports)) {
    const finding = await fetchToken(clients, url, pending.token);
    if (finding === undefined) return { found: true };
    findings.push(finding);
  }
  return { found: false, finding: findings.join("; ") };
}

/** Undefined when the file holds the token (surrounding whitespace aside); else what was found. */
async function fetchToken({ outbound, outboundTimeoutMs, dns }: ChallengeClients, url: string, token: string): Promise<string | undefined> {
  try {
    const res = await outbound.request(url, {
      timeoutMs: outboundTimeoutMs,
      headers: { accept: "text/plain" },
      // The operator's DNS servers answer for the domain's address too, as for its TXT records.
      ...(dns.ownServers && { resolve: (hostname: string) => dns.addresses(hostname) }),
    });
    if (res.status !== 200) return `${url} answered HTTP ${res.status}${res.status >= 300 && res.status < 400 ? " (redirects are not followed)" : ""}`;
    const body = res.body.toString("utf8").trim();
    return body === token ? undefined : `${url} answered ${shown(body)}, not the token`;
  } catch (error) {
    if (!(error instanceof OutboundError)) return `${url} could not be called: ${(error as Error).message}`;
    switch (error.failure) {
      case "timeout":
        return `${url} did not answer within ${outboundTimeoutMs} ms`;
      case "refused":
        return `${url} was not called: ${error.message}, and the service calls no internal address (PLATFORM_OUTBOUND_ALLOW_PRIVATE)`;
      case "too_large":
        return `${url} answered too much: ${error.message}`;
      default:
        return `${url} could not be called: ${readable(error.message)}`;
    }
  }
}

/** OpenSSL's errors span lines and name its source files: its reason is what tells. */
function readable(message: string): string {
  const tls = /SSL routines:[^:]*:([^:]+)/.exec(message);
  return tls ? `TLS failed: ${tls[1]}` : message.split("\n", 1)[0]!.trim();
}
