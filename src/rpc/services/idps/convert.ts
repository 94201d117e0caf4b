import { create, fromJson, toJson, type DescMessage, type JsonObject, type Message } from "@bufbuild/protobuf";
import { IDPFieldName, OptionsSchema, ProviderTypeSchema, type IDPSearchFilter, type Options } from "../../../../gen/platform/resources/idp/v3alpha/idp_pb.js";
import { State, StatePolicy } from "../../../../gen/platform/resources/object/v3alpha/object_pb.js";
import { ownerOfContext } from "../../../domain/context.js";
import type { EffectiveState, IdpView, StatePolicyName } from "../../../domain/idp/model.js";
import type { IdpFilter } from "../../../domain/idp/queries.js";
import { OWNER_TYPES, detailsToProto, textMatchFromProto } from "../convert.js";

const POLICIES: Record<StatePolicyName, StatePolicy> = {
  activate: StatePolicy.ACTIVATE,
  deactivate: StatePolicy.DEACTIVATE,
  inherit: StatePolicy.INHERIT,
};

const STATES: Record<EffectiveState, State> = {
  active: State.EFFECTIVE_STATE_ACTIVE,
  inactive: State.EFFECTIVE_STATE_INACTIVE,
};

/** UNSPECIFIED: absent (a patch's validation refuses it; a create means INHERIT). */
export function policyFromProto(policy: StatePolicy): StatePolicyName | undefined {
  return (Object.keys(POLICIES) as StatePolicyName[]).find((name) => POLICIES[name] === policy);
}

function stateFromProto(state: State): EffectiveState {
  return state === State.EFFECTIVE_STATE_INACTIVE ? "inactive" : "active";
}

/** Stored as proto3 JSON: what the API says is what is kept, whatever it grows into. */
export function optionsToJson(options: Options | undefined): Record<string, unknown> {
  return options ? (toJson(OptionsSchema, options) as JsonObject) : {};
}

/**
 * A configuration message as stored: proto3 JSON without the type's secret (the client secret,
 * Apple's private key, LDAP's bind password), and the secret apart (sealed by the command,
 * never stored or logged in the clear).
 */
export function configToJson(desc: DescMessage, config: Message, secretField: string): { config: Record<string, unknown>; secret: string | undefined } {
  const { [secretField]: secret, ...rest } = toJson(desc, config) as JsonObject;
  return { config: rest, secret: secret as string | undefined };
}

/** A stored configuration for reading: everything but the secret, which has no field to go to. */
export function configFromJson(desc: DescMessage, stored: Record<string, unknown>) {
  return fromJson(desc, stored as JsonObject, { ignoreUnknownFields: true });
}

/** By stored type name ("gitlab"): the enum's values, named PROVIDER_TYPE_GITLAB and so on. */
const PROVIDER_TYPES = new Map(ProviderTypeSchema.values.map((v) => [v.name.replace(/^PROVIDER_TYPE_/, "").toLowerCase(), v.number]));

function providerTypeToProto(type: string): number {
  const number = PROVIDER_TYPES.get(type);
  if (number === undefined) throw new Error(`identity provider type ${type} has no ProviderType value`);
  return number;
}

/**
 * What every read returns (GetIDP and each Get<Type>IDP): the type-agnostic part, with `idp`
 * the provider's own (idpToProto, or the typed message with its configuration).
 */
export function viewToProto<I>(view: IdpView, idp: I) {
  const parent = view.parent && ownerOfContext(view.parent.context);
  return {
    details: detailsToProto(view.details),
    state: STATES[view.state],
    type: providerTypeToProto(view.type),
    parent: parent && { parent: { type: OWNER_TYPES[parent.type], id: parent.id }, state: STATES[view.parent!.state] },
    idp,
  };
}

export function idpToProto(view: IdpView) {
  return { name: view.name, statePolicy: POLICIES[view.statePolicy], options: optionsFromJson(view.options) };
}

/** Most providers keep the default options, stored as `{}`: those need no parsing. */
function optionsFromJson(stored: Record<string, unknown>): Options {
  return Object.keys(stored).length === 0 ? create(OptionsSchema) : fromJson(OptionsSchema, stored as JsonObject, { ignoreUnknownFields: true });
}

export function idpFilterFromProto(filter: IDPSearchFilter): IdpFilter {
  switch (filter.filter.case) {
    case "id":
      return { id: filter.filter.value.id };
    case "name":
      return { name: { value: filter.filter.value.name, match: textMatchFromProto(filter.filter.value.method) } };
    case "state":
      return { state: stateFromProto(filter.filter.value.state) };
    default:
      // Validation requires one filter (buf.validate oneof required).
      throw new Error("empty IDP search filter");
  }
}

export function idpSortFromProto(column: IDPFieldName): "name" | "created_at" {
  return column === IDPFieldName.IDP_FIELD_NAME_NAME ? "name" : "created_at";
}
