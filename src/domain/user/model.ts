import type { UserRow } from "../../store/schema.js";
import type { ObjectDetails } from "../details.js";
import { readableData, type JsonObject, type Party } from "../user-schema/fields.js";

export type UserState = UserRow["state"];
/** A person (human) or a service account (machine). */
export type UserKind = UserRow["type"];
export type Gender = NonNullable<UserRow["gender"]>;
/** The access tokens a service account gets: opaque (bearer) or JWT. */
export type AccessTokenKind = NonNullable<UserRow["access_token_type"]>;

export const AGGREGATE = "user";

export interface Profile {
  givenName: string;
  familyName: string;
  displayName: string;
  nickName: string;
  preferredLanguage: string;
  gender: Gender | undefined;
}

interface HumanSpec {
  kind: "human";
  profile: Profile;
  email: { address: string; verified: boolean };
  phone: { number: string; verified: boolean } | undefined;
  /** Argon2id of a clear-text password, or an imported hash; hashing happens before the transaction. */
  passwordHash: string | undefined;
  passwordChangeRequired: boolean;
}

interface MachineSpec {
  kind: "machine";
  name: string;
  description: string;
  accessTokenType: AccessTokenKind;
}

/** A user of a user schema: its data is checked against the schema in the transaction. */
interface SchemaSpec {
  kind: "schema";
  schemaId: string;
  data: JsonObject;
}

export interface UserSpec {
  username: string;
  type: HumanSpec | MachineSpec | SchemaSpec;
}

export interface UserPatch {
  username?: string;
  human?: Partial<Omit<Profile, "gender">> & {
    gender?: Gender | undefined;
    email?: { address: string; verified: boolean };
    phone?: { number: string; verified: boolean };
    removePhone?: boolean;
  };
  machine?: Partial<Omit<MachineSpec, "kind">>;
  /** A JSON merge patch of a schema user's data. */
  schema?: { data: JsonObject };
}

export interface UserView {
  details: ObjectDetails;
  username: string;
  loginName: string;
  state: UserState;
  human?: {
    profile: Profile;
    email: { address: string; verified: boolean };
    phone: { number: string; verified: boolean } | undefined;
    hasPassword: boolean;
    passwordChangeRequired: boolean;
    passwordChanged: Date | undefined;
  };
  machine?: { name: string; description: string; accessTokenType: AccessTokenKind; hasSecret: boolean };
  /** The data as the reader may see it (the schema's field permissions). */
  schema?: { schemaId: string; revision: number; data: JsonObject };
}

/** A user is owned by its organization. */
export function userDetails(row: Pick<UserRow, "id" | "org_id" | "sequence" | "change_date">): ObjectDetails {
  return { id: row.id, sequence: row.sequence, changeDate: row.change_date, owner: { type: "org", id: row.org_id } };
}

export interface UserViewRow extends UserRow {
  primary_domain: string | null;
  password_changed_at: Date | null;
  password_change_required: boolean | null;
  has_secret: boolean;
  /** A schema user's schema (its JSON Schema, for the field permissions). */
  user_schema: Record<string, unknown> | null;
}

/** `reader`: whether the user is read by one who manages it or by itself (the schema's field permissions differ). */
export function userView(row: UserViewRow, reader: Party = "owner"): UserView {
  const base = {
    details: userDetails(row),
    username: row.username,
    loginName: `${row.username}@${row.primary_domain ?? ""}`,
    state: row.state,
  };
  if (row.type === "schema") {
    return {
      ...base,
      schema: {
        schemaId: row.schema_id ?? "",
        revision: row.schema_revision ?? 0,
        data: row.user_schema && row.data ? readableData(row.user_schema, row.data as JsonObject, reader) : {},
      },
    };
  }
  if (row.type === "machine") {
    return {
      ...base,
      machine: { name: row.name, description: row.description ?? "", accessTokenType: row.access_token_type ?? "bearer", hasSecret: row.has_secret },
    };
  }
  return {
    ...base,
    human: {
      profile: {
        givenName: row.given_name ?? "",
        familyName: row.family_name ?? "",
        displayName: row.name,
        nickName: row.nick_name ?? "",
        preferredLanguage: row.preferred_language ?? "",
        gender: row.gender ?? undefined,
      },
      email: { address: row.email ?? "", verified: row.email_verified ?? false },
      phone: row.phone ? { number: row.phone, verified: row.phone_verified ?? false } : undefined,
      hasPassword: row.password_changed_at !== null,
      passwordChangeRequired: row.password_change_required ?? false,
      passwordChanged: row.password_changed_at ?? undefined,
    },
  };
}
