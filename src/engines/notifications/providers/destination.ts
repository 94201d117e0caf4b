import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { isInternalAddress } from "../../../http/outbound.js";
import { SendFailed } from "../message.js";

export interface SmtpDestination {
  /** What to connect to: the host as configured, or the checked address it resolved to. */
  host: string;
  /** The name the certificate must carry when `host` is a resolved address. */
  servername?: string;
}

/**
 * Where to connect for an SMTP host. Configured through the API, it must not be an internal
 * address (unless PLATFORM_OUTBOUND_ALLOW_PRIVATE): the name is resolved here, every address
 * checked as the outbound client checks its calls' (src/http/outbound.ts), and the connection
 * pinned to the first, so that no second DNS answer can swap an internal one in after the
 * check. The certificate is still verified against the name.
 */
export async function smtpDestination(host: string, checked: boolean): Promise<SmtpDestination> {
  if (!checked) return { host };
  const literal = host.replace(/^\[|\]$/g, "");
  if (isIP(literal)) {
    if (isInternalAddress(literal)) throw refused(`${literal} is an internal address`);
    return { host: literal };
  }
  let addresses;
  try {
    addresses = await lookup(host, { all: true });
  } catch (error) {
    throw new SendFailed(`${host} could not be resolved (${(error as NodeJS.ErrnoException).code ?? "DNS error"})`, true);
  }
  const internal = addresses.find((a) => isInternalAddress(a.address));
  if (internal) throw refused(`${host} resolves to the internal address ${internal.address}`);
  return { host: addresses[0]!.address, servername: host };
}

/** A destination the policy refuses stays refused until the provider changes. */
const refused = (why: string) => new SendFailed(`${why}, which providers may not reach`, false);
