import type { ColumnType, Generated, Selectable, Updateable } from "kysely";

/** Row types of every table; migrations/ is what creates them. */
export interface Database {
  events: EventTable;
  instances: InstanceTable;
  instance_domains: InstanceDomainTable;
  orgs: OrgTable;
  org_domains: OrgDomainTable;
  users: UserTable;
  personal_access_tokens: PersonalAccessTokenTable;
  memberships: MembershipTable;
  instance_features: InstanceFeatureTable;
  targets: TargetTable;
  executions: ExecutionTable;
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
  /** Position among its instance's events (a sequence per instance; see store/instance-sequence.ts). */
  instance_position: number;
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
}

export interface InstanceDomainTable {
  instance_id: string;
  domain: string;
  is_primary: boolean;
  created_at: Timestamp;
}

export type OrgState = "active" | "inactive";

export interface OrgTable extends ProjectionColumns {
  id: string;
  name: string;
  state: ColumnType<OrgState, OrgState | undefined, OrgState>;
}
export type OrgRow = Selectable<OrgTable>;

export interface OrgDomainTable extends ProjectionColumns {
  domain: string;
  org_id: string;
  is_primary: boolean;
  is_verified: boolean;
  /** The domain made from the organization's name at its creation. */
  is_generated: boolean;
}
export type OrgDomainRow = Selectable<OrgDomainTable>;

export interface UserTable extends ProjectionColumns {
  id: string;
  org_id: string;
  username: string;
  type: "machine" | "human";
  name: string;
}

export interface PersonalAccessTokenTable {
  instance_id: string;
  id: string;
  user_id: string;
  token_hash: string;
  expires_at: Timestamp;
  created_at: Timestamp;
}

export type ContextType = "system" | "instance" | "org";

export interface MembershipTable extends ProjectionColumns {
  user_id: string;
  context_type: ContextType;
  /** Instance or organization id; empty for the system context. */
  context_id: string;
  roles: Json<string[]>;
}

export interface InstanceFeatureTable {
  instance_id: string;
  name: string;
  enabled: boolean;
  change_date: Timestamp;
}

export type TargetKind = "rest_webhook" | "rest_request_response";
export type ExecutionMode = "sync" | "async" | "interrupt_on_error";

export interface TargetTable extends ProjectionColumns {
  id: string;
  name: string;
  target_type: TargetKind;
  url: string;
  timeout_ms: number;
  execution_mode: ExecutionMode;
  /** AES-256-GCM under the master key; see crypto/encryption.ts. */
  signing_key: string;
}
export type TargetRow = Selectable<TargetTable>;
export type TargetUpdate = Updateable<TargetTable>;

export type ConditionType = "request" | "response" | "function" | "event";

export interface ExecutionTable extends ProjectionColumns {
  id: string;
  condition_type: ConditionType;
  targets: Json<string[]>;
  includes: Json<string[]>;
}
export type ExecutionRow = Selectable<ExecutionTable>;
