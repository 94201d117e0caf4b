import type { Selectable } from "kysely";
import type { UserSchemaTable } from "../../store/schema.js";
import { instanceOwnedDetails, type ObjectDetails } from "../details.js";

export const AGGREGATE = "user_schema";

export type UserSchemaRow = Selectable<UserSchemaTable>;
export type UserSchemaState = UserSchemaRow["state"];

/** How a user of a schema may authenticate (the API's AuthenticatorType without its prefix, lower-cased). */
export type Authenticator = "username" | "password" | "webauthn" | "totp" | "otp_email" | "otp_sms" | "pat" | "key";

export interface UserSchemaView {
  details: ObjectDetails;
  type: string;
  state: UserSchemaState;
  revision: number;
  schema: Record<string, unknown>;
  possibleAuthenticators: Authenticator[];
}

export function userSchemaView(row: UserSchemaRow): UserSchemaView {
  return {
    details: instanceOwnedDetails({ ...row, instance_id: row.instance_id }),
    type: row.type,
    state: row.state,
    revision: row.revision,
    schema: row.schema,
    possibleAuthenticators: row.possible_authenticators as Authenticator[],
  };
}
