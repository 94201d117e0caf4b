import type { IdpIntentRow } from "../../store/schema.js";
import type { ObjectDetails } from "../details.js";

export type ExternalProfileJson = NonNullable<IdpIntentRow["identity"]>;

/** The aggregate of intent events. */
export const AGGREGATE = "idp_intent";

/** What an intent is started with. */
export interface NewIntent {
  idpId: string;
  /** The organization the provider was found active in. */
  orgId: string;
  successUrl: string;
  failureUrl: string;
}

/** What the provider said of the person, as a succeeded intent keeps it. */
export interface UpstreamIdentity {
  externalUserId: string;
  identity: ExternalProfileJson;
  raw: Record<string, unknown>;
}

/** A succeeded intent as its token's holder reads it. */
export interface IntentView extends UpstreamIdentity {
  details: ObjectDetails;
  idpId: string;
  /** The user the external account is linked to now, if any. */
  userId: string | undefined;
  expiresAt: Date;
}
