import type { ColumnType, Generated, Selectable, Updateable } from "kysely";

/*
 * The tables as Kysely sees them, each column typed as the table holds it. Where a column
 * holds one of a few words (a user's state, a factor's type) or a JSON document (a session's
 * factors), its type says so here, unexported: the store is below the domain and may not
 * import its words, and a plain `string` would let every insert and update write a word the
 * domain does not know. The domain names these words (UserState = UserRow["state"] in
 * domain/user/model.ts, SessionFactorsJson in domain/session/model.ts, ...): its rules and the
 * layers above take them from there, never from here.
 */

/** Row types of every table; migrations/ is what creates them. */
export interface Database {
  events: EventTable;
  instances: InstanceTable;
  instance_domains: InstanceDomainTable;
  orgs: OrgTable;
  org_domains: OrgDomainTable;
  users: UserTable;
  user_secrets: UserSecretTable;
  user_keys: UserKeyTable;
  user_metadata: UserMetadataTable;
  personal_access_tokens: PersonalAccessTokenTable;
  memberships: MembershipTable;
  idps: IdpTable;
  idp_state_policies: IdpStatePolicyTable;
  external_identities: ExternalIdentityTable;
  settings: SettingsTable;
  settings_files: SettingsFileTable;
  projects: ProjectTable;
  project_roles: ProjectRoleTable;
  user_grants: UserGrantTable;
  project_grants: ProjectGrantTable;
  user_schemas: UserSchemaTable;
  user_search_values: UserSearchValueTable;
  apps: AppTable;
  app_keys: AppKeyTable;
  signing_keys: SigningKeyTable;
  oidc_payloads: OidcPayloadTable;
  targets: TargetTable;
  executions: ExecutionTable;
  action_deliveries: ActionDeliveryTable;
  notification_providers: NotificationProviderTable;
  notifications: NotificationTable;
  user_codes: UserCodeTable;
  user_factors: UserFactorTable;
  user_recovery_codes: UserRecoveryCodeTable;
  sessions: SessionTable;
  idp_intents: IdpIntentTable;
  user_webauthn_keys: UserWebAuthnKeyTable;
}

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T> = ColumnType<T, string, string>;

export interface EventTable {
  position: Generated<number>;
  instance_id: string;
  aggregate_type: string;
  aggregate_id: string;
  sequence: number;
  event_type: string;
  payload: Json<unknown>;
  creator: string;
  /** The resource's organization; '' for the instance's own resources (migration 0030). */
  org_id: Generated<string>;
  /** Where the change came from over HTTP (store/editor.ts Origin); null otherwise. */
  editor_client: string | null;
  editor_ip: string | null;
  editor_agent: string | null;
  /** Position among its instance's events (a sequence per instance; see store/instance-sequence.ts). */
  instance_position: number;
  /**
   * The writing transaction's id (pg_current_xact_id(), set by the database): the audit log
   * reads events in (tx_id, instance_position) order up to the oldest running transaction, so
   * a reader that resumes after an event never misses one committed later (domain/audit).
   */
  tx_id: ColumnType<string, never, never>;
  /** Set by the database at insert (clock_timestamp()). */
  created_at: ColumnType<Date, never, never>;
}

/** Columns every projection carries: which event it reflects last. */
interface ProjectionColumns {
  instance_id: string;
  created_at: Timestamp;
  change_date: Timestamp;
  sequence: number;
}

export interface InstanceTable extends ProjectionColumns {
  id: string;
  name: string;
  default_org_id: string;
  /** Null: the default policy (domain/user/password-policy.ts). */
  password_policy: ColumnType<PasswordPolicyJson | null, string | null | undefined, string | null>;
  blocked: ColumnType<boolean, boolean | undefined, boolean>;
  audit_log_retention_ms: number | null;
  /** The client_id of the instance's console application (migration 0029); null until provisioned. */
  console_client_id: ColumnType<string | null, string | null | undefined, string | null>;
}
export type InstanceRow = Selectable<InstanceTable>;

interface PasswordPolicyJson {
  minLength: number;
  requireUppercase: boolean;
  requireLowercase: boolean;
  requireNumber: boolean;
  requireSymbol: boolean;
}

interface InstanceDomainTable {
  instance_id: string;
  domain: string;
  is_primary: boolean;
  created_at: Timestamp;
}

type OrgState = "active" | "inactive";

interface OrgTable extends ProjectionColumns {
  id: string;
  name: string;
  state: ColumnType<OrgState, OrgState | undefined, OrgState>;
}
export type OrgRow = Selectable<OrgTable>;

interface OrgDomainTable extends ProjectionColumns {
  domain: string;
  org_id: string;
  is_primary: boolean;
  is_verified: boolean;
  /** The domain made from the organization's name at its creation. */
  is_generated: boolean;
  /** The pending ownership proof (GenerateDomainValidation); all three null when none is. */
  validation_type: ColumnType<DomainValidationType | null, DomainValidationType | null | undefined, DomainValidationType | null>;
  validation_token: ColumnType<string | null, string | null | undefined, string | null>;
  validation_created_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}
type DomainValidationType = "dns" | "http";
export type OrgDomainRow = Selectable<OrgDomainTable>;

type UserState = "active" | "inactive" | "locked";
type UserKind = "machine" | "human" | "schema";
type Gender = "female" | "male" | "diverse";
type AccessTokenKind = "bearer" | "jwt";

interface UserTable extends ProjectionColumns {
  id: string;
  org_id: string;
  username: string;
  type: UserKind;
  /** A person's display name, a service account's name. */
  name: string;
  state: ColumnType<UserState, UserState | undefined, UserState>;
  given_name: string | null;
  family_name: string | null;
  nick_name: string | null;
  preferred_language: string | null;
  gender: Gender | null;
  email: string | null;
  email_verified: boolean | null;
  phone: string | null;
  phone_verified: boolean | null;
  description: string | null;
  access_token_type: AccessTokenKind | null;
  /** When the person last skipped setting up a second factor the login settings ask for. */
  mfa_init_skipped_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When the person last answered "Not now" to the login pages' offer of a passkey (migration 0024). */
  passkey_prompt_skipped_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Failed checks of a password or a second factor since the last success (domain/user/lockout.ts, migration 0028). */
  failed_checks: ColumnType<number, number | undefined, number>;
  /** A schema user's schema, the revision its data last met, and the data (migration 0032); null for the others. */
  schema_id: ColumnType<string | null, string | null | undefined, string | null>;
  schema_revision: ColumnType<number | null, number | null | undefined, number | null>;
  data: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
}
export type UserRow = Selectable<UserTable>;
export type UserUpdate = Updateable<UserTable>;

/** Hashes only: Argon2id for passwords (or an imported hash until the next sign-in), SHA-256 for client secrets. */
interface UserSecretTable {
  instance_id: string;
  user_id: string;
  kind: "password" | "client_secret";
  hash: string;
  change_required: boolean;
  changed_at: Timestamp;
}

interface UserMetadataTable {
  instance_id: string;
  user_id: string;
  key: string;
  value: Uint8Array;
  change_date: Timestamp;
}

interface UserKeyTable extends ProjectionColumns {
  id: string;
  user_id: string;
  key_type: "rsa" | "ec";
  /** PEM (SPKI). */
  public_key: string;
  expires_at: Timestamp;
}

interface PersonalAccessTokenTable {
  instance_id: string;
  id: string;
  user_id: string;
  token_hash: string;
  expires_at: Timestamp;
  created_at: Timestamp;
}

type ContextType = "system" | "instance" | "org";
/** Memberships hold in a context, or in one project grant (PROJECT_GRANT_OWNER). */
type MembershipContextType = ContextType | "project_grant";

export interface MembershipTable extends ProjectionColumns {
  user_id: string;
  context_type: MembershipContextType;
  /** Instance, organization or project grant id; empty for the system context. */
  context_id: string;
  roles: Json<string[]>;
}

/** '' in instance_id: the system; '' in org_id: not an organization's. */
export interface IdpTable {
  id: string;
  instance_id: string;
  org_id: string;
  owner_type: ContextType;
  type: string;
  name: string;
  /** The owning context's own policy. */
  state_policy: StatePolicyName;
  options: Json<Record<string, unknown>>;
  /** The type's configuration without its client secret, in proto3 JSON. */
  config: Json<Record<string, unknown>>;
  /** Sealed with the master key (crypto/encryption.ts). */
  client_secret: string;
  created_at: Timestamp;
  change_date: Timestamp;
  sequence: number;
}

type StatePolicyName = "activate" | "deactivate" | "inherit";

/** A user's account at an identity provider (external login); the provider's id of it is the key. */
interface ExternalIdentityTable {
  instance_id: string;
  idp_id: string;
  external_user_id: string;
  user_id: string;
  external_username: string;
  external_email: string;
  created_at: Timestamp;
  change_date: Timestamp;
}

interface IdpStatePolicyTable {
  idp_id: string;
  instance_id: string;
  org_id: string;
  /** INHERIT is the absence of a row. */
  policy: Exclude<StatePolicyName, "inherit">;
  change_date: Timestamp;
}

export interface SettingsTable {
  instance_id: string;
  org_id: string;
  kind: string;
  /** The properties set in this context; absent ones inherit. */
  properties: Json<Record<string, unknown>>;
  change_date: Timestamp;
  sequence: number;
}

/** A file of a kind of settings in a context (a branding image); see migrations/0022-settings-files.ts. */
interface SettingsFileTable {
  instance_id: string;
  org_id: string;
  kind: string;
  name: string;
  content_type: string;
  /** Of the data; the file's URL names it, so that a new file gets a new URL. */
  hash: string;
  data: Uint8Array;
  change_date: Timestamp;
}

type TargetKind = "rest_webhook" | "rest_request_response";
type ExecutionMode = "sync" | "async" | "interrupt_on_error";

type ProjectState = "active" | "inactive";

export interface ProjectTable extends ProjectionColumns {
  id: string;
  org_id: string;
  name: string;
  role_assertion: boolean;
  role_check: boolean;
  state: ColumnType<ProjectState, ProjectState | undefined, ProjectState>;
}

/** A role of a project; its changes are events of the project. */
export interface ProjectRoleTable {
  instance_id: string;
  project_id: string;
  key: string;
  display_name: string;
  group_name: string;
  created_at: Timestamp;
}

/**
 * Roles of a project given to a user; owned by the project's organization, or by the granted
 * organization when made under its project grant.
 */
export interface UserGrantTable extends ProjectionColumns {
  id: string;
  org_id: string;
  project_id: string;
  user_id: string;
  role_keys: Json<string[]>;
  /** The project grant it was made under; '' for the project organization's own (migration 0031). */
  project_grant_id: ColumnType<string, string | undefined, string>;
}

/** A kind of user with a JSON Schema for its users' data; an instance's resource (migration 0032). */
export interface UserSchemaTable extends ProjectionColumns {
  id: string;
  type: string;
  state: ColumnType<"active" | "inactive", "active" | "inactive" | undefined, "active" | "inactive">;
  revision: number;
  schema: Json<Record<string, unknown>>;
  possible_authenticators: Json<string[]>;
}

/** A schema user's searchable field's value as text, for SearchUsers' `data` filter (migration 0033). */
interface UserSearchValueTable {
  instance_id: string;
  user_id: string;
  /** The field's JSON pointer. */
  field: string;
  value: string;
}

/** Roles of a project its organization (org_id) gives another organization of the instance. */
export interface ProjectGrantTable extends ProjectionColumns {
  id: string;
  org_id: string;
  project_id: string;
  granted_org_id: string;
  role_keys: Json<string[]>;
  state: ColumnType<ProjectState, ProjectState | undefined, ProjectState>;
}

/** An application of a project; owned by the project's organization. */
export interface AppTable extends ProjectionColumns {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  type: "oidc" | "api";
  config: Json<object>;
  client_id: string;
  /** SHA-256 of the client secret; null for methods without one. */
  secret_hash: string | null;
  state: ColumnType<"active" | "inactive", "active" | "inactive" | undefined, "active" | "inactive">;
}

/** A public key of an application, for private_key_jwt client authentication. */
interface AppKeyTable extends ProjectionColumns {
  id: string;
  app_id: string;
  key_type: "rsa" | "ec";
  public_key: string;
  expires_at: Timestamp;
}

/** A key an instance signs tokens with; see migrations/0008-oidc-storage.ts. */
export interface SigningKeyTable {
  instance_id: string;
  id: string;
  algorithm: "ES256" | "RS256";
  public_jwk: Json<Record<string, string>>;
  /** The private JWK, sealed with the master key (crypto/encryption.ts). */
  private_jwk: string;
  created_at: Timestamp;
  activates_at: Timestamp;
  retires_at: Timestamp | null;
}

/** A model node-oidc-provider stores; see src/oidc/adapters/payload-adapter.ts. */
interface OidcPayloadTable {
  instance_id: string;
  model: string;
  id: string;
  payload: Json<Record<string, unknown>>;
  grant_id: string | null;
  uid: string | null;
  user_code: string | null;
  expires_at: Timestamp | null;
  consumed_at: Timestamp | null;
}

export interface TargetTable extends ProjectionColumns {
  id: string;
  name: string;
  target_type: TargetKind;
  url: string;
  timeout_ms: number;
  execution_mode: ExecutionMode;
  /** AES-256-GCM under the master key; see crypto/encryption.ts. */
  signing_key: string;
  /** The key before the last regeneration (sealed alike), still signing during the grace period. */
  previous_signing_key: string | null;
  signing_key_changed_at: Timestamp | null;
}
export type TargetRow = Selectable<TargetTable>;
export type TargetUpdate = Updateable<TargetTable>;

type ConditionType = "request" | "response" | "function" | "event";

interface ExecutionTable extends ProjectionColumns {
  id: string;
  condition_type: ConditionType;
  targets: Json<string[]>;
  includes: Json<string[]>;
}
export type ExecutionRow = Selectable<ExecutionTable>;

type DeliveryStatus = "pending" | "delivered" | "failed";

/** One event for one target of an event execution (migrations/0012-action-deliveries.ts). */
interface ActionDeliveryTable {
  instance_id: string;
  id: string;
  event_position: number;
  event_type: string;
  aggregate_type: string;
  aggregate_id: string;
  event_sequence: number;
  target_id: string;
  execution_id: string;
  status: DeliveryStatus;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  claimed_until: Timestamp | null;
  claim_id: string | null;
  last_error: string | null;
  last_status: number | null;
  created_at: Timestamp;
  window_start: Timestamp;
  delivered_at: Timestamp | null;
}
export type ActionDeliveryRow = Selectable<ActionDeliveryTable>;

type ProviderFamily = "smtp" | "sms";
type ProviderKind = "smtp" | "twilio" | "http";

/** An SMTP or SMS provider of an instance (migrations/0015-notification-providers.ts). */
interface NotificationProviderTable extends ProjectionColumns {
  id: string;
  family: ProviderFamily;
  kind: ProviderKind;
  description: string;
  state: "active" | "inactive";
  /** The kind's settings without secrets (domain/notification-provider/model.ts). */
  config: Json<Record<string, unknown>>;
  /** The SMTP password or Twilio token, sealed under the master key. */
  secret: string | null;
  /** An `http` provider's signing key, sealed alike. */
  signing_key: string | null;
}
export type NotificationProviderRow = Selectable<NotificationProviderTable>;

type NotificationStatus = "pending" | "sent" | "failed";

interface NotificationTable {
  instance_id: string;
  id: string;
  org_id: string;
  user_id: string;
  kind: string;
  channel: "email" | "sms";
  recipient: string;
  language: string | null;
  status: NotificationStatus;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  claimed_until: Timestamp | null;
  claim_id: string | null;
  last_error: string | null;
  sealed_data: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  sent_at: Timestamp | null;
}
export type NotificationRow = Selectable<NotificationTable>;

interface UserCodeTable {
  instance_id: string;
  user_id: string;
  purpose: string;
  code_hash: string;
  target: string;
  failed_attempts: Generated<number>;
  created_at: Timestamp;
  expires_at: Timestamp;
}

type FactorType = "totp" | "otp_email" | "otp_sms";

/** A second factor of a user (migration 0019): a TOTP is pending until its first code. */
interface UserFactorTable {
  instance_id: string;
  user_id: string;
  type: FactorType;
  state: "pending" | "ready";
  /** The TOTP secret, sealed with the instance's key (crypto/encryption.ts). */
  sealed_secret: string | null;
  /** The TOTP time step of the last accepted code: a code is taken once. */
  last_step: ColumnType<string | null, number | string | null | undefined, number | string | null>;
  created_at: Timestamp;
}
export type UserFactorRow = Selectable<UserFactorTable>;

/** One recovery code of a user, keyed-hashed; a used one stays until a new set replaces it. */
interface UserRecoveryCodeTable {
  instance_id: string;
  user_id: string;
  code_hash: string;
  created_at: Timestamp;
  used_at: Timestamp | null;
}

/** When a session checked each factor (ISO dates), by the factor's name in the API. */
interface SessionFactorsJson {
  user?: { id: string; checkedAt: string };
  password?: { checkedAt: string };
  totp?: { checkedAt: string };
  otpEmail?: { checkedAt: string };
  otpSms?: { checkedAt: string };
  recoveryCode?: { checkedAt: string };
  /** A WebAuthn assertion: `userVerified` when the authenticator verified the person (a passkey: two factors in one). */
  webAuthN?: { checkedAt: string; userVerified: boolean; kind: WebAuthnKind; deviceType: string };
  /** An external login (an identity provider intent): the provider vouched for the person. */
  idpIntent?: { checkedAt: string; idpId: string; externalUserId: string };
}

interface SessionUserAgentJson {
  fingerprintId?: string;
  ip?: string;
  description?: string;
}

/** A session of the session API (migration 0020); never its token, only the token's SHA-256. */
interface SessionTable extends ProjectionColumns {
  id: string;
  token_hash: string;
  user_id: string | null;
  factors: ColumnType<SessionFactorsJson, string | undefined, string>;
  /** Base64 values by key. */
  metadata: ColumnType<Record<string, string>, string | undefined, string>;
  user_agent: ColumnType<SessionUserAgentJson, string | undefined, string>;
  expires_at: Timestamp | null;
  /** The pending WebAuthn challenge the session's next webAuthN check answers (migration 0021). */
  challenges: ColumnType<SessionChallengesJson, string | undefined, string>;
}

interface SessionChallengesJson {
  webAuthN?: { challenge: string; rpId: string; userVerification: "required" | "preferred" | "discouraged"; issuedAt: string };
}
export type SessionRow = Selectable<SessionTable>;

/** An external login started through the API (migration 0023); never its token, only the token's SHA-256. */
export interface IdpIntentTable extends ProjectionColumns {
  id: string;
  idp_id: string;
  /** The organization the provider was found active in. */
  org_id: string;
  success_url: string;
  failure_url: string;
  state: "started" | "succeeded" | "failed" | "consumed";
  token_hash: string | null;
  external_user_id: string | null;
  /** The person as the provider described it. */
  identity: ColumnType<ExternalProfileJson | null, string | null | undefined, string | null>;
  /** The provider's claims as it answered them. */
  raw_information: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  expires_at: Timestamp;
}

/** A person as an identity provider describes it (external login's ExternalUser, upstream-idps/clients.ts, is this with the account's id). */
interface ExternalProfileJson {
  username: string;
  email: string;
  emailVerified: boolean;
  givenName: string;
  familyName: string;
  displayName: string;
  preferredLanguage: string;
  /** LDAP's phone attribute; the other types have none. */
  phone?: string;
}
export type IdpIntentRow = Selectable<IdpIntentTable>;

type WebAuthnKind = "passkey" | "u2f";

/** A WebAuthn credential of a user (migration 0021); pending while its registration is not finished. */
interface UserWebAuthnKeyTable {
  instance_id: string;
  id: string;
  user_id: string;
  kind: WebAuthnKind;
  state: "pending" | "ready";
  name: string;
  rp_id: string;
  challenge: string | null;
  user_verification: "required" | "preferred" | "discouraged";
  credential_id: string | null;
  /** The credential's COSE public key, base64url. */
  public_key: string | null;
  sign_count: ColumnType<string, number | string | undefined, number | string>;
  transports: ColumnType<string[], string | undefined, string>;
  /** singleDevice or multiDevice (a synced passkey), as the registration said. */
  device_type: string | null;
  created_at: Timestamp;
}
export type UserWebAuthnKeyRow = Selectable<UserWebAuthnKeyTable>;
