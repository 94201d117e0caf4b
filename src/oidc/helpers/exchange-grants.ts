import type { Db } from "../../store/db.js";
import { payloadAdapters, type OidcPayload } from "../adapters/payload-adapter.js";

/** The gty of tokens issued by token exchange (RFC 8693); refreshed ones append `refresh_token`. */
export const EXCHANGE_GTY = "token-exchange";

/**
 * What an exchanged token keeps beyond the provider's grant, by grant id: the actor (RFC 8693
 * section 4.1) and the audience asked for. The provider's refresh grant rebuilds access tokens
 * from the grant alone; without this, a refreshed token would drop its `act` (passing an
 * impersonation off as the user's own) and widen its audience to the client's defaults.
 */
const EXCHANGE_MODEL = "TokenExchange";

/** RFC 8693 section 4.1: who acts, nested when the actor itself acted for someone. */
export interface Actor {
  sub: string;
  iss: string;
  act?: Actor;
}

export interface ExchangeRecord {
  act?: Actor;
  aud: string[];
}

export async function saveExchange(db: () => Db, instanceId: string, grantId: string, record: ExchangeRecord, expiresInS: number): Promise<void> {
  const Payloads = payloadAdapters(db, instanceId);
  // grantId is indexed: revoking the grant (end session) removes this record with it.
  await new Payloads(EXCHANGE_MODEL).upsert(grantId, { grantId, ...record } as OidcPayload, expiresInS);
}

type TokenLike = { gty?: string; grantId?: string; extra?: Record<string, unknown> };

/**
 * The actor and audience an access token carries because it was exchanged: set on the token
 * when the exchange issues it, or kept by grant when the refresh grant issues it later.
 */
export async function exchangeOf(db: () => Db, instanceId: string, token: TokenLike): Promise<{ act?: Actor; aud?: string[] }> {
  const act = token.extra?.act as Actor | undefined;
  if (act) return { act };
  if (!token.gty?.split(" ").includes(EXCHANGE_GTY) || !token.grantId) return {};
  const Payloads = payloadAdapters(db, instanceId);
  const stored = await new Payloads(EXCHANGE_MODEL).find(token.grantId);
  if (!stored) return {};
  return {
    ...(stored.act !== undefined && { act: stored.act as Actor }),
    ...(Array.isArray(stored.aud) && { aud: stored.aud as string[] }),
  };
}
