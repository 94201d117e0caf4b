import { createHash } from "node:crypto";
import { LOGIN_PATH } from "../kit/paths.js";

/**
 * The state of an authorization request upstream, kept from the start until the provider's
 * callback in `oidc_payloads` (../records.ts) under this model and the state's hash. Two
 * kinds of flow start one: the login pages' (flow.ts) and the API's intents (intents.ts).
 */
export const STATE_MODEL = "ExternalLoginState";

/**
 * The one callback of the instance's host for every provider and both kinds of flow: the
 * redirect URI to register at providers.
 */
export const CALLBACK_PATH = `${LOGIN_PATH}/idp/callback`;

/** States are looked up by their hash: the table never holds one that could be replayed. */
export const stateKey = (state: string) => createHash("sha256").update(state).digest("base64url");
