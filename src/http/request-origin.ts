import type { IncomingMessage } from "node:http";
import { originOf, type Origin } from "../store/editor.js";

/** Where a request came from, for the audit log: the client it acts through (if any), the peer's address, its user agent. */
export function requestOrigin(req: Pick<IncomingMessage, "socket" | "headers">, client: string | undefined): Origin {
  return originOf({ client, ip: req.socket?.remoteAddress, userAgent: req.headers["user-agent"] });
}
