import type { Selectable } from "kysely";
import type { IdpTable } from "../../store/schema.js";
import { contextFromColumns, type ContextRef, encloses, ownerOfContext, parentOf, sameContext } from "../context.js";
import type { ObjectDetails } from "../details.js";
import type { SecretAim } from "../secret-aim.js";
import { newSpKeyPair } from "./saml.js";

/** Whether a context's provider is active there: its own, or as its parent context says (inherit). */
export type StatePolicyName = Selectable<IdpTable>["state_policy"];

export const AGGREGATE = "idp";
/** A child context's policy changes: an aggregate per provider in the child's instance. */
export const POLICY_AGGREGATE = "idp.policy";

export type IdpRow = Selectable<IdpTable>;

/**
 * Where a provider's client secret goes, whatever its type (secret-aim.ts): to the token
 * endpoint, given or found at the issuer, as the client it names. The authorization and user
 * endpoints count too: an OAuth provider pointed at another server is another provider, and
 * its secret was given for the first. Settings a type lacks never change.
 */
const CLIENT_SECRET_AIM: SecretAim = {
  settings: ["issuer", "authorizationEndpoint", "tokenEndpoint", "userEndpoint", "clientId"],
  secret: "client secret",
  renewedBy: "clientSecret",
};

/**
 * Apple's private key signs the client secret of each code redeemed, naming the team, the key
 * and the Services ID: given for those three, it is kept only for them.
 */
const APPLE_KEY_AIM: SecretAim = { settings: ["clientId", "teamId", "keyId"], secret: "private key", renewedBy: "privateKey" };

/**
 * Where an LDAP provider's bind password goes: the servers, whether ldap:// is upgraded
 * (without, the password would travel in the clear), the CA that vouches for the servers,
 * and the account it opens.
 */
const BIND_PASSWORD_AIM: SecretAim = {
  settings: ["servers", "startTls", "rootCa", "bindDn"],
  secret: "bind password",
  renewedBy: "bindPassword",
};

/**
 * A SAML provider's SP key pair is the service's own, made with the provider (saml.ts): no
 * request gives it, so no setting aims it.
 */
const SP_KEY_AIM: SecretAim = { settings: [], secret: "SP key pair", renewedBy: "" };

type SecretField = "clientSecret" | "privateKey" | "bindPassword" | "spKeyPair";
interface TypeSecret {
  field: SecretField;
  aim: SecretAim;
  /** Makes the secret of a type the service keeps its own (no configuration has the field). */
  generate?: () => Promise<string>;
}
const SECRETS: Record<string, TypeSecret> = {
  apple: { field: "privateKey", aim: APPLE_KEY_AIM },
  ldap: { field: "bindPassword", aim: BIND_PASSWORD_AIM },
  saml: { field: "spKeyPair", aim: SP_KEY_AIM, generate: newSpKeyPair },
};

/**
 * The configuration field that holds a type's secret (sealed in the client_secret column,
 * never in a configuration, an event or an answer), what it is given for, and whether the
 * service makes it instead (no configuration has the field then).
 */
export function secretOf(type: string): TypeSecret {
  return SECRETS[type] ?? { field: "clientSecret", aim: CLIENT_SECRET_AIM };
}

export type EffectiveState = "active" | "inactive";

/** The policies of the contexts between the asked one and the owner, as read with the row. */
export interface PoliciesAlong {
  /** The asked organization's own policy, when it reuses the provider. */
  org?: Exclude<StatePolicyName, "inherit"> | null;
  /** The asked (or the asked organization's) instance's policy, when it reuses a system provider. */
  instance?: Exclude<StatePolicyName, "inherit"> | null;
}

/** A provider as seen in one context. */
export interface IdpView {
  details: ObjectDetails;
  type: string;
  name: string;
  options: Record<string, unknown>;
  config: Record<string, unknown>;
  state: EffectiveState;
  /** The asked context's own policy (the owner's, for a provider defined below it). */
  statePolicy: StatePolicyName;
  parent?: { context: ContextRef; state: EffectiveState };
}

export function ownerOfIdp(row: Pick<IdpRow, "instance_id" | "org_id">): ContextRef {
  return contextFromColumns(row);
}

/**
 * The effective state in a context: its own policy, else (INHERIT) the state in its parent;
 * in the owning context INHERIT counts as ACTIVE.
 */
function stateIn(row: Pick<IdpRow, "state_policy">, owner: ContextRef, policies: PoliciesAlong, at: ContextRef): EffectiveState {
  if (sameContext(at, owner)) return row.state_policy === "deactivate" ? "inactive" : "active";
  const own = at.type === "org" ? policies.org : at.type === "instance" ? policies.instance : undefined;
  if (own) return own === "deactivate" ? "inactive" : "active";
  return stateIn(row, owner, policies, parentOf(at)!);
}

/** What a view reads of a provider's row: reads select only these (not its sealed client secret). */
export const IDP_VIEW_COLUMNS = ["id", "instance_id", "org_id", "type", "name", "state_policy", "options", "config", "change_date", "sequence"] as const;
export type IdpViewRow = Pick<IdpRow, (typeof IDP_VIEW_COLUMNS)[number]>;

/** The provider seen from `asked`, which is its owner, below it (reusing it) or above it (a child's). */

export function idpView(row: IdpViewRow, asked: ContextRef, policies: PoliciesAlong): IdpView {
  const owner = ownerOfIdp(row);
  const details = { id: row.id, sequence: row.sequence, changeDate: row.change_date, owner: ownerOfContext(owner) };
  // Spelled out rather than spread from a common base: a search builds one per row, and on
  // Node 20 an object literal that spreads and then adds properties costs ~2 µs.
  if (sameContext(owner, asked) || !encloses(owner, asked)) {
    const state = stateIn(row, owner, policies, owner);
    return { details, type: row.type, name: row.name, options: row.options, config: row.config, state, statePolicy: row.state_policy };
  }
  const parent = parentOf(asked)!;
  const own = asked.type === "org" ? policies.org : policies.instance;
  return {
    details,
    type: row.type,
    name: row.name,
    options: row.options,
    config: row.config,
    state: stateIn(row, owner, policies, asked),
    statePolicy: own ?? "inherit",
    parent: { context: parent, state: stateIn(row, owner, policies, parent) },
  };
}
