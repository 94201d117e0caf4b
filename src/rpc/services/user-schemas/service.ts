import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import {
  AuthenticatorType,
  UserSchemaFieldName,
  UserSchemaState,
  type GetUserSchema,
  type UserSchemaSearchFilter,
} from "../../../../gen/platform/resources/user_schema/v3alpha/user_schema_pb.js";
import type { PlatformUserSchemas } from "../../../../gen/platform/resources/user_schema/v3alpha/user_schema_service_pb.js";
import type { ObjectDetails } from "../../../domain/details.js";
import { addUserSchema, patchUserSchema, removeUserSchema, setUserSchemaState } from "../../../domain/user-schema/commands.js";
import type { Authenticator, UserSchemaState as StoredState, UserSchemaView } from "../../../domain/user-schema/model.js";
import { getUserSchema, searchUserSchemas, type UserSchemaFilter, type UserSchemaSearch } from "../../../domain/user-schema/queries.js";
import type { Store } from "../../../store/database.js";
import type { Tx } from "../../../store/db.js";
import { page } from "../../../store/search.js";
import { actorOf, tenantOf } from "../../context.js";
import { detailsToProto, searchResult, textMatchFromProto } from "../convert.js";
import { handlerStore } from "../writes.js";

const AUTHENTICATORS: Record<Authenticator, AuthenticatorType> = {
  username: AuthenticatorType.USERNAME,
  password: AuthenticatorType.PASSWORD,
  webauthn: AuthenticatorType.WEBAUTHN,
  totp: AuthenticatorType.TOTP,
  otp_email: AuthenticatorType.OTP_EMAIL,
  otp_sms: AuthenticatorType.OTP_SMS,
  pat: AuthenticatorType.PAT,
  key: AuthenticatorType.KEY,
};
const FROM_PROTO = new Map(Object.entries(AUTHENTICATORS).map(([name, value]) => [value, name as Authenticator]));
// Validation refuses UNSPECIFIED and undefined values.
const authenticatorsFromProto = (types: AuthenticatorType[]) => types.map((t) => FROM_PROTO.get(t)!);

const STATES: Record<StoredState, UserSchemaState> = { active: UserSchemaState.ACTIVE, inactive: UserSchemaState.INACTIVE };

function schemaToProto(view: UserSchemaView): Omit<GetUserSchema, "$typeName"> {
  return {
    details: detailsToProto(view.details),
    type: view.type,
    state: STATES[view.state],
    revision: view.revision,
    schema: view.schema as GetUserSchema["schema"],
    possibleAuthenticators: view.possibleAuthenticators.map((a) => AUTHENTICATORS[a]),
  };
}

function filterFromProto({ filter }: UserSchemaSearchFilter): UserSchemaFilter {
  switch (filter.case) {
    case "type":
      return { type: { value: filter.value.value, match: textMatchFromProto(filter.value.method) } };
    case "state":
      return { state: filter.value.state === UserSchemaState.ACTIVE ? "active" : "inactive" };
    default:
      // Validation requires exactly one filter.
      throw new Error("user schema filter without a case");
  }
}

const SORT: Record<UserSchemaFieldName, UserSchemaSearch["sort"]> = {
  [UserSchemaFieldName.UNSPECIFIED]: "created_at",
  [UserSchemaFieldName.TYPE]: "type",
  [UserSchemaFieldName.CREATION_DATE]: "created_at",
  [UserSchemaFieldName.CHANGE_DATE]: "change_date",
};

/** Translates between the API and the domain; the rules live in domain/user-schema. */
export function userSchemasService({ store, access }: { store: Pick<Store, "forRequest">; access: AccessEpoch }): ServiceImpl<typeof PlatformUserSchemas> {
  const { database, write, changingAccess } = handlerStore(store, access);
  const details = async (ctx: HandlerContext, fn: (tx: Tx) => Promise<ObjectDetails>) => ({ details: detailsToProto(await write(ctx, fn)) });
  // How a schema's users authenticate is cached with them as OAuth clients (keys: oidc/helpers/lookups.ts).
  const changing = async (ctx: HandlerContext, fn: (tx: Tx) => Promise<ObjectDetails>) => ({ details: detailsToProto(await changingAccess(ctx, fn)) });
  return {
    createUserSchema(req, ctx) {
      const { type, schema, possibleAuthenticators } = req.userSchema!;
      return details(ctx, (tx) =>
        addUserSchema(tx, actorOf(ctx), {
          type,
          schema: schema as Record<string, unknown>,
          possibleAuthenticators: authenticatorsFromProto(possibleAuthenticators),
        }),
      );
    },
    async getUserSchema(req, ctx) {
      return { userSchema: schemaToProto(await getUserSchema(database(ctx).db, tenantOf(ctx).id, req.id)) };
    },
    patchUserSchema(req, ctx) {
      const { type, schema, possibleAuthenticators } = req.userSchema!;
      return changing(ctx, (tx) =>
        patchUserSchema(tx, actorOf(ctx), req.id, {
          ...(type !== undefined && { type }),
          ...(schema !== undefined && { schema: schema as Record<string, unknown> }),
          ...(possibleAuthenticators.length > 0 && { possibleAuthenticators: authenticatorsFromProto(possibleAuthenticators) }),
        }),
      );
    },
    deactivateUserSchema(req, ctx) {
      return details(ctx, (tx) => setUserSchemaState(tx, actorOf(ctx), req.id, "inactive"));
    },
    activateUserSchema(req, ctx) {
      return details(ctx, (tx) => setUserSchemaState(tx, actorOf(ctx), req.id, "active"));
    },
    deleteUserSchema(req, ctx) {
      return details(ctx, (tx) => removeUserSchema(tx, actorOf(ctx), req.id));
    },
    async searchUserSchemas(req, ctx) {
      const p = page(req.query);
      const found = await searchUserSchemas(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(filterFromProto),
        sort: SORT[req.sortingColumn],
        page: p,
      });
      return { ...searchResult(found, p, schemaToProto), sortingColumn: req.sortingColumn };
    },
  };
}
