import type { IncomingMessage } from "node:http";
import { USER_AGENT_MAX, type Origin } from "../store/eventstore.js";

/** Where a request came from, for the audit log: the client it acts through (if any), the peer's address, its user agent. */
export function requestOrigin(req: Pick<IncomingMessage, "socket" | "headers">, client: string | undefined): Origin {
  const origin: Origin = {};
  if (client !== undefined) origin.client = client;
  if (req.socket?.remoteAddress) origin.ip = req.socket.remoteAddress;
  const userAgent = req.headers["user-agent"];
  if (userAgent) origin.userAgent = userAgent.slice(0, USER_AGENT_MAX);
  return origin;
}
