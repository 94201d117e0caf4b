/** Where a change came from when it came over HTTP: recorded with its events for the audit log. */
export interface Origin {
  /** The client the caller authenticated through: `app:<client id>` or `pat:<token id>`. */
  client?: string;
  ip?: string;
  userAgent?: string;
}

/** User agents are recorded up to this length: any client may send any header. */
const USER_AGENT_MAX = 512;

/** An origin from what a request says of itself, its empty parts left out and its user agent cut to USER_AGENT_MAX. */
export function originOf(parts: { client?: string | undefined; ip?: string | undefined; userAgent?: string | null | undefined }): Origin {
  const origin: Origin = {};
  if (parts.client) origin.client = parts.client;
  if (parts.ip) origin.ip = parts.ip;
  if (parts.userAgent) origin.userAgent = parts.userAgent.slice(0, USER_AGENT_MAX);
  return origin;
}

/** Who writes: the user id ("system" for the service itself) and, over HTTP, from where. */
export interface Editor {
  userId: string;
  origin?: Origin;
}

/** The service writing on its own behalf (sweeps, bootstrap, upstream answers). */
export const SYSTEM_EDITOR: Editor = { userId: "system" };
