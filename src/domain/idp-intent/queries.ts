import type { Db } from "../../store/db.js";
import { instanceOwnedDetails } from "../details.js";
import { notFound, permissionDenied } from "../errors.js";
import { linkedUser } from "../user/external-identities.js";
import { provenIntent } from "./commands.js";
import type { IntentView } from "./model.js";

/**
 * A succeeded intent for the holder of its token (RetrieveIDPIntent): what the provider said
 * of the person, and the user its account is linked to now (a login UI may have registered
 * and linked one since the callback).
 */
export async function retrieveIdpIntent(db: Db, instanceId: string, id: string, token: string): Promise<IntentView> {
  const proven = await provenIntent(db, instanceId, id, token, false);
  if (!proven.ok) {
    if (proven.kind === "unusable") throw proven.error;
    throw proven.kind === "missing" ? notFound(`idp intent ${id} not found`) : permissionDenied("idp_intent_token is not the intent's token");
  }
  const { row } = proven;
  const linked = await linkedUser(db, instanceId, row.idp_id, row.external_user_id);
  return {
    details: instanceOwnedDetails(row),
    idpId: row.idp_id,
    externalUserId: row.external_user_id,
    identity: row.identity!,
    raw: row.raw_information ?? {},
    userId: linked?.userId,
    expiresAt: row.expires_at,
  };
}
