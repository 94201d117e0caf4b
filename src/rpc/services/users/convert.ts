import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  AccessTokenType,
  Gender,
  GetHumanUserSchema,
  GetMachineUserSchema,
  GetSchemaUserSchema,
  UserFieldName,
  UserState,
  UserType,
  type GetUser,
  type PatchUser,
  type Profile as ProfileProto,
  type User,
  type UserSearchFilter,
} from "../../../../gen/platform/resources/user/v3alpha/user_pb.js";
import type {
  AccessTokenKind,
  Gender as GenderName,
  Profile,
  UserKind,
  UserPatch,
  UserSpec,
  UserState as UserStateName,
  UserView,
} from "../../../domain/user/model.js";
import { importedHash } from "../../../domain/user/passwords.js";
import type { UserFilter, UserSortColumn } from "../../../domain/user/queries.js";
import { detailsToProto, textMatchFromProto } from "../convert.js";

const GENDERS: Record<GenderName, Gender> = { female: Gender.FEMALE, male: Gender.MALE, diverse: Gender.DIVERSE };
const TOKEN_TYPES: Record<AccessTokenKind, AccessTokenType> = { bearer: AccessTokenType.BEARER, jwt: AccessTokenType.JWT };
/** Validation requires a defined kind other than UNSPECIFIED. */
const USER_KINDS: Partial<Record<UserType, UserKind>> = { [UserType.HUMAN]: "human", [UserType.MACHINE]: "machine", [UserType.SCHEMA]: "schema" };
const STATES: Record<UserStateName, UserState> = { active: UserState.ACTIVE, inactive: UserState.INACTIVE, locked: UserState.LOCKED };

function reverse<K extends string, V extends number>(record: Record<K, V>): Map<V, K> {
  return new Map(Object.entries(record).map(([k, v]) => [v as V, k as K]));
}
const GENDER_NAMES = reverse(GENDERS);
const TOKEN_TYPE_NAMES = reverse(TOKEN_TYPES);
const STATE_NAMES = reverse(STATES);

function genderFromProto(gender: Gender): GenderName | undefined {
  return GENDER_NAMES.get(gender);
}

function accessTokenTypeFromProto(type: AccessTokenType): AccessTokenKind {
  return TOKEN_TYPE_NAMES.get(type) ?? "bearer";
}

function profileFromProto(p: ProfileProto): Profile {
  return {
    givenName: p.givenName,
    familyName: p.familyName,
    displayName: p.displayName || `${p.givenName} ${p.familyName}`,
    nickName: p.nickName,
    preferredLanguage: p.preferredLanguage,
    gender: genderFromProto(p.gender),
  };
}

/**
 * A new user from its request: a clear-text password is hashed by `hashPassword` (which
 * applies the instance's policy), an imported hash checked for a format we can verify.
 */
export async function userSpecFromProto({ username, type }: User, hashPassword: (password: string) => Promise<string>): Promise<UserSpec> {
  if (type.case === "human") {
    const h = type.value;
    const password = h.passwordType;
    return {
      username,
      type: {
        kind: "human",
        profile: profileFromProto(h.profile!),
        email: { address: h.email!.address, verified: h.email!.isVerified },
        phone: h.phone && { number: h.phone.number, verified: h.phone.isVerified },
        passwordHash:
          password.case === "password" ? await hashPassword(password.value) : password.case === "hashedPassword" ? importedHash(password.value) : undefined,
        passwordChangeRequired: h.passwordChangeRequired,
      },
    };
  }
  if (type.case === "schema") return { username, type: { kind: "schema", schemaId: type.value.schemaId, data: type.value.data ?? {} } };
  // Validation requires one of the three kinds.
  const m = type.value!;
  return { username, type: { kind: "machine", name: m.name, description: m.description, accessTokenType: accessTokenTypeFromProto(m.accessTokenType) } };
}

export function userPatchFromProto(p: PatchUser): UserPatch {
  const patch: UserPatch = {};
  if (p.username !== undefined) patch.username = p.username;
  if (p.human) {
    const h = p.human;
    patch.human = {
      ...(h.givenName !== undefined && { givenName: h.givenName }),
      ...(h.familyName !== undefined && { familyName: h.familyName }),
      ...(h.displayName !== undefined && { displayName: h.displayName }),
      ...(h.nickName !== undefined && { nickName: h.nickName }),
      ...(h.preferredLanguage !== undefined && { preferredLanguage: h.preferredLanguage }),
      ...(h.gender !== undefined && { gender: genderFromProto(h.gender) }),
      ...(h.email && { email: { address: h.email.address, verified: h.email.isVerified } }),
      ...(h.phone && { phone: { number: h.phone.number, verified: h.phone.isVerified } }),
      ...(h.removePhone && { removePhone: true }),
    };
  }
  if (p.machine) {
    const m = p.machine;
    patch.machine = {
      ...(m.name !== undefined && { name: m.name }),
      ...(m.description !== undefined && { description: m.description }),
      ...(m.accessTokenType !== undefined && { accessTokenType: accessTokenTypeFromProto(m.accessTokenType) }),
    };
  }
  if (p.schema) patch.schema = { data: p.schema.data ?? {} };
  return patch;
}

export function userToProto(view: UserView): Omit<GetUser, "$typeName"> {
  const base = { details: detailsToProto(view.details), username: view.username, loginName: view.loginName, state: STATES[view.state] };
  if (view.schema) {
    return { ...base, type: { case: "schema", value: create(GetSchemaUserSchema, view.schema) } };
  }
  if (view.machine) {
    const m = view.machine;
    return {
      ...base,
      type: {
        case: "machine",
        value: create(GetMachineUserSchema, {
          name: m.name,
          description: m.description,
          accessTokenType: TOKEN_TYPES[m.accessTokenType],
          hasSecret: m.hasSecret,
        }),
      },
    };
  }
  const h = view.human!;
  return {
    ...base,
    type: {
      case: "human",
      value: create(GetHumanUserSchema, {
        profile: { ...h.profile, gender: h.profile.gender ? GENDERS[h.profile.gender] : Gender.UNSPECIFIED },
        email: { address: h.email.address, isVerified: h.email.verified },
        ...(h.phone && { phone: { number: h.phone.number, isVerified: h.phone.verified } }),
        hasPassword: h.hasPassword,
        passwordChangeRequired: h.passwordChangeRequired,
        ...(h.passwordChanged && { passwordChanged: timestampFromDate(h.passwordChanged) }),
      }),
    },
  };
}

export function userFilterFromProto({ filter }: UserSearchFilter): UserFilter {
  switch (filter.case) {
    case "inIds":
      return { ids: filter.value.ids };
    case "username":
    case "loginName":
    case "email":
    case "displayName":
      return { [filter.case]: { value: filter.value.value, match: textMatchFromProto(filter.value.method) } } as UserFilter;
    case "organization":
      return { orgId: filter.value.orgId };
    case "type":
      return { type: USER_KINDS[filter.value.type]! };
    case "schema":
      return { schemaId: filter.value.schemaId };
    case "data":
      return { data: { field: filter.value.field, value: filter.value.value, match: textMatchFromProto(filter.value.method) } };
    case "state":
      return { state: STATE_NAMES.get(filter.value.state)! };
    default:
      // Validation requires exactly one filter.
      throw new Error("user filter without a case");
  }
}

const SORT: Record<UserFieldName, UserSortColumn> = {
  [UserFieldName.UNSPECIFIED]: "created_at",
  [UserFieldName.ID]: "id",
  [UserFieldName.CREATION_DATE]: "created_at",
  [UserFieldName.CHANGE_DATE]: "change_date",
  [UserFieldName.USERNAME]: "username",
  [UserFieldName.DISPLAY_NAME]: "name",
  [UserFieldName.EMAIL]: "email",
  [UserFieldName.STATE]: "state",
  [UserFieldName.TYPE]: "type",
};

export function userSortFromProto(column: UserFieldName): UserSortColumn {
  return SORT[column];
}
