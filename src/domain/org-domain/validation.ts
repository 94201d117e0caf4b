import type { Db, Tx } from "../../store/db.js";
import { domainDetails, type DomainValidationType } from "./model.js";
import type { Actor, ObjectDetails } from "../details.js";
import { failedPrecondition, notFound } from "../errors.js";
import { appendOrgEvent, domainRowsForUpdate } from "./commands.js";

/**
 * Proving that an organization owns a domain, as ZITADEL and ACME's HTTP-01 and DNS-01 do:
 * a random token published where only the domain's owner can publish, then looked for. The
 * token is public by design, so it is stored as it is and checked for equality; it stays
 * out of the events all the same (they say which kind of proof, not its text).
 */

/** The label of the TXT record: `_platform-challenge.<domain>`. */
const DNS_CHALLENGE_LABEL = "_platform-challenge";
/** The path of the file, before `<token>.txt`. */
const HTTP_CHALLENGE_PATH = "/.well-known/platform-challenge/";

export interface ChallengePorts {
  https: number;
  http: number;
}

/** A token waiting to be found. */
export interface PendingValidation {
  domain: string;
  type: DomainValidationType;
  token: string;
}

/** Where the owner publishes the token: the TXT record's name, or the file's URLs (https first). */
export function challengeLocations(type: DomainValidationType, domain: string, token: string, ports: ChallengePorts): string[] {
  if (type === "dns") return [`${DNS_CHALLENGE_LABEL}.${domain}`];
  const at = (scheme: "https" | "http") => {
    const port = ports[scheme] === (scheme === "https" ? 443 : 80) ? "" : `:${ports[scheme]}`;
    return `${scheme}://${domain}${port}${HTTP_CHALLENGE_PATH}${token}.txt`;
  };
  return [at("https"), at("http")];
}

/**
 * A new token for a domain, replacing any earlier one. Generated domains are verified from
 * the start and verified ones stay so: neither needs a proof.
 */
export async function generateValidation(
  tx: Tx,
  actor: Actor,
  domain: string,
  type: DomainValidationType,
  token: string,
): Promise<ObjectDetails & { domain: string; createdAt: Date }> {
  const { current, org } = await domainRowsForUpdate(tx, actor.instanceId, domain);
  if (current.is_generated) throw failedPrecondition(`${current.domain} was generated from the organization's name and is verified already`);
  if (current.is_verified) throw failedPrecondition(`${current.domain} is verified already`);
  const appended = await appendOrgEvent(tx, actor, org, { type: "org.domain.validation.generated", payload: { domain: current.domain, type } });
  await tx
    .updateTable("org_domains")
    .set({
      validation_type: type,
      validation_token: token,
      validation_created_at: appended.createdAt,
      change_date: appended.createdAt,
      sequence: appended.sequence,
    })
    .where("instance_id", "=", actor.instanceId)
    .where("domain", "=", current.domain)
    .execute();
  return {
    ...domainDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt }),
    domain: current.domain,
    createdAt: appended.createdAt,
  };
}

/** The token ValidateDomain looks for; FailedPrecondition when there is none to look for. */
export async function pendingValidation(db: Db, instanceId: string, domain: string, ttlMs: number, now = new Date()): Promise<PendingValidation> {
  const name = domain.toLowerCase();
  const row = await db.selectFrom("org_domains").selectAll().where("instance_id", "=", instanceId).where("domain", "=", name).executeTakeFirst();
  if (!row) throw notFound(`domain ${domain} not found`);
  if (row.is_verified) throw failedPrecondition(`${row.domain} is verified already`);
  if (!row.validation_type || !row.validation_token || !row.validation_created_at) {
    throw failedPrecondition(`no validation of ${row.domain} is pending; generate a token first (_generate_validation)`);
  }
  const expires = new Date(new Date(row.validation_created_at).getTime() + ttlMs);
  if (expires <= now)
    throw failedPrecondition(`the validation token of ${row.domain} expired at ${expires.toISOString()}; generate a new one (_generate_validation)`);
  return { domain: row.domain, type: row.validation_type, token: row.validation_token };
}

/**
 * The token was found: the domain is verified and the token gone. A token replaced while it
 * was looked for proves nothing about the new one; a domain verified meanwhile stays so.
 */
export async function markVerified(tx: Tx, actor: Actor, found: PendingValidation): Promise<ObjectDetails> {
  const { current, org } = await domainRowsForUpdate(tx, actor.instanceId, found.domain);
  if (current.is_verified) return domainDetails(current);
  if (current.validation_token !== found.token)
    throw failedPrecondition(`the validation token of ${current.domain} was replaced while it was checked; publish the new one and validate again`);
  const appended = await appendOrgEvent(tx, actor, org, { type: "org.domain.verified", payload: { domain: current.domain, type: found.type } });
  await tx
    .updateTable("org_domains")
    .set({
      is_verified: true,
      validation_type: null,
      validation_token: null,
      validation_created_at: null,
      change_date: appended.createdAt,
      sequence: appended.sequence,
    })
    .where("instance_id", "=", actor.instanceId)
    .where("domain", "=", current.domain)
    .execute();
  return domainDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}
