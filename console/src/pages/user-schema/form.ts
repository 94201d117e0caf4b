import type { JsonObject } from "@bufbuild/protobuf";
import { AuthenticatorType, type GetUserSchema } from "../../../../gen/platform/resources/user_schema/v3alpha/user_schema_pb";

/**
 * A user schema as its form holds it, and back: its type, its authenticators (enum numbers as
 * strings, ChoiceInputs.tsx) and its JSON Schema as text. The text is checked to be a JSON
 * object before it is sent; whether it is a JSON Schema the server says.
 */
export interface SchemaValues {
  type: string;
  authenticators: string[];
  schema: string;
}

export const AUTHENTICATORS = [
  { value: String(AuthenticatorType.USERNAME), label: "Username" },
  { value: String(AuthenticatorType.PASSWORD), label: "Password" },
  { value: String(AuthenticatorType.WEBAUTHN), label: "Passkeys and security keys" },
  { value: String(AuthenticatorType.TOTP), label: "Authenticator app" },
  { value: String(AuthenticatorType.OTP_EMAIL), label: "Codes by email" },
  { value: String(AuthenticatorType.OTP_SMS), label: "Codes by SMS" },
  { value: String(AuthenticatorType.PAT), label: "Personal access tokens" },
  { value: String(AuthenticatorType.KEY), label: "Keys (JWT profile)" },
];

export const EMPTY_SCHEMA: SchemaValues = {
  type: "",
  authenticators: [String(AuthenticatorType.USERNAME), String(AuthenticatorType.PASSWORD)],
  schema: JSON.stringify({ type: "object", properties: {} }, null, 2),
};

export function schemaValues(s: GetUserSchema | undefined): SchemaValues {
  return {
    type: s?.type ?? "",
    authenticators: (s?.possibleAuthenticators ?? []).map(String),
    schema: JSON.stringify(s?.schema ?? {}, null, 2),
  };
}

/** The fields a CreateUserSchema or PatchUserSchema request carries for these (checked) values. */
export function schemaFields(v: SchemaValues) {
  return { type: v.type.trim(), schema: JSON.parse(v.schema) as JsonObject, possibleAuthenticators: v.authenticators.map(Number) };
}

/** The text is a JSON object, or what is wrong with it; `what` names it in the refusal. */
export function jsonObject(text: string, what = "The schema"): true | string {
  try {
    const value: unknown = JSON.parse(text);
    return (value !== null && typeof value === "object" && !Array.isArray(value)) || `${what} must be a JSON object ({ … }).`;
  } catch (error) {
    return `Not JSON: ${(error as Error).message}`;
  }
}
