import type { Selectable } from "kysely";
import type { AppTable } from "../../store/schema.js";
import type { ObjectDetails } from "../details.js";

export const AGGREGATE = "app";

export type ResponseType = "code" | "id_token" | "id_token token";
export type GrantType = "authorization_code" | "implicit" | "refresh_token" | "token_exchange";
export type OidcAppType = "web" | "user_agent" | "native";
export type OidcAuthMethod = "basic" | "post" | "none" | "private_key_jwt";
export type ApiAuthMethod = "basic" | "private_key_jwt";

/** An OpenID Connect client as stored and as the provider will read it: every default filled in. */
export interface OidcConfig {
  redirectUris: string[];
  responseTypes: ResponseType[];
  grantTypes: GrantType[];
  appType: OidcAppType;
  authMethod: OidcAuthMethod;
  postLogoutRedirectUris: string[];
  devMode: boolean;
  accessTokenType: "bearer" | "jwt";
  accessTokenRoleAssertion: boolean;
  idTokenRoleAssertion: boolean;
  idTokenUserinfoAssertion: boolean;
  clockSkewMs: number;
  additionalOrigins: string[];
}

export interface ApiConfig {
  authMethod: ApiAuthMethod;
}

export type AppConfig = { type: "oidc"; oidc: OidcConfig } | { type: "api"; api: ApiConfig };

export type AppRow = Selectable<AppTable>;

export interface AppView {
  details: ObjectDetails;
  projectId: string;
  name: string;
  config: AppConfig;
  clientId: string;
  state: "active" | "inactive";
  hasSecret: boolean;
}

/** The authentication methods that present a client secret. */
export function usesSecret(config: AppConfig): boolean {
  const method = config.type === "oidc" ? config.oidc.authMethod : config.api.authMethod;
  return method === "basic" || method === "post";
}

export function appDetails(row: Pick<AppRow, "id" | "org_id" | "sequence" | "change_date">): ObjectDetails {
  return { id: row.id, sequence: row.sequence, changeDate: row.change_date, owner: { type: "org", id: row.org_id } };
}

export function configOf(row: Pick<AppRow, "type" | "config">): AppConfig {
  return row.type === "oidc" ? { type: "oidc", oidc: row.config as OidcConfig } : { type: "api", api: row.config as ApiConfig };
}

export function appView(row: AppRow): AppView {
  return {
    details: appDetails(row),
    projectId: row.project_id,
    name: row.name,
    config: configOf(row),
    clientId: row.client_id,
    state: row.state,
    hasSecret: row.secret_hash !== null,
  };
}
