import type { Db, Tx } from "../../store/db.js";
import { invalidArgument } from "../errors.js";

/**
 * Where WebAuthn credentials are bound: the relying party id is a domain of the instance
 * (credentials of one domain work only there), and an answer counts only from a page of that
 * domain or below it, over https (http only on `localhost` and names under `.localhost`, which
 * browsers treat as secure contexts: the README's instances are named so).
 */

/** The domain a request names as relying party id: one of the instance's own, else InvalidArgument. */
export async function checkedRpId(db: Db | Tx, instanceId: string, domain: string): Promise<string> {
  const rpId = domain.trim().toLowerCase();
  const found = await db.selectFrom("instance_domains").select("domain").where("instance_id", "=", instanceId).where("domain", "=", rpId).executeTakeFirst();
  if (!found) throw invalidArgument(`domain: "${domain}" is no domain of this instance`);
  return rpId;
}

/** The origin an authenticator's answer was made on, when it may count for `rpId`; InvalidArgument otherwise. */
export function answerOrigin(clientDataJSON: unknown, rpId: string): string {
  let origin: string | undefined;
  let crossOrigin = false;
  try {
    const data = JSON.parse(Buffer.from(String(clientDataJSON), "base64url").toString("utf8"));
    origin = typeof data.origin === "string" ? data.origin : undefined;
    crossOrigin = data.crossOrigin === true;
  } catch {
    origin = undefined;
  }
  // An answer made in a frame of another site is not the person acting on our page.
  if (crossOrigin) throw invalidArgument("the authenticator answered inside a frame of another origin");
  let url: URL | undefined;
  try {
    url = origin === undefined ? undefined : new URL(origin);
  } catch {
    url = undefined;
  }
  const host = url?.hostname;
  const secure = url?.protocol === "https:" || (url?.protocol === "http:" && (host === "localhost" || host?.endsWith(".localhost") === true));
  if (!url || !host || !secure || (host !== rpId && !host.endsWith(`.${rpId}`))) {
    throw invalidArgument(`the authenticator answered for ${origin ?? "an unknown origin"}, not for a page of ${rpId}`);
  }
  return url.origin;
}
