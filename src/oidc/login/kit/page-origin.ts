import type { SignInCheck } from "../../../domain/audit/sign-ins.js";
import type { Actor } from "../../../domain/details.js";
import { requestOrigin } from "../../../http/request-origin.js";
import type { NodeRequest } from "../../../http/respond.js";
import type { Origin } from "../../../store/editor.js";
import type { Interaction, LoginContext } from "./context.js";

/** A request to the login pages: of an interaction, or of none (code-pages.ts). */
export interface PageRequest {
  c: Pick<LoginContext, "instanceId" | "signIns">;
  req: NodeRequest;
  details?: Interaction;
}

/**
 * Where a page's request comes from, for the audit log: the interaction's client
 * (`app:<client_id>`), the peer's address, the user agent. What the pages change and the
 * sign-ins they check record it, as the API's changes record their caller's (rpc/context.ts).
 */
function pageOrigin({ req, details }: PageRequest): Origin {
  const clientId = details?.params.client_id;
  return requestOrigin(req, typeof clientId === "string" ? `app:${clientId}` : undefined);
}

/** Who changes something through a page: the user, or "system" for what nobody signed in asks for (a registration). */
export function pageActor(p: PageRequest, userId: string): Actor {
  return { instanceId: p.c.instanceId, userId, origin: pageOrigin(p) };
}

/** A sign-in attempt a page checked (channel `login`): recorded without waiting for its row. */
export function recordSignIn(p: PageRequest, check: SignInCheck): void {
  p.c.signIns.record({ instanceId: p.c.instanceId, channel: "login", origin: pageOrigin(p), ...check });
}
