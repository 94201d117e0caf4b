import { durationFromMs } from "@bufbuild/protobuf/wkt";
import {
  APIAuthMethodType,
  AppFieldName,
  AppState,
  OIDCAppType,
  OIDCAuthMethodType,
  OIDCGrantType,
  OIDCResponseType,
  OIDCTokenType,
  type App,
  type AppSearchFilter,
  type GetApp,
  type PatchApp,
} from "../../../../gen/platform/resources/app/v3alpha/app_pb.js";
import type { AppPatch } from "../../../domain/app/commands.js";
import type { ApiAuthMethod, AppConfig, AppView, GrantType, OidcAppType, OidcAuthMethod, OidcConfig, ResponseType } from "../../../domain/app/model.js";
import type { AppFilter, AppSearch } from "../../../domain/app/queries.js";
import { detailsToProto, durationToMs, textMatchFromProto } from "../convert.js";

/** Each enum as a two-way table: the proto value for every stored name; UNSPECIFIED is not stored. */
function table<N extends string>(entries: Record<N, number>) {
  const byValue = new Map(Object.entries(entries).map(([name, value]) => [value as number, name as N]));
  return { toProto: (name: N) => entries[name], fromProto: (value: number, fallback: N) => byValue.get(value) ?? fallback };
}

const RESPONSE = table<ResponseType>({
  code: OIDCResponseType.OIDC_RESPONSE_TYPE_CODE,
  id_token: OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN,
  "id_token token": OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN,
});
const GRANT = table<GrantType>({
  authorization_code: OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE,
  implicit: OIDCGrantType.OIDC_GRANT_TYPE_IMPLICIT,
  refresh_token: OIDCGrantType.OIDC_GRANT_TYPE_REFRESH_TOKEN,
  token_exchange: OIDCGrantType.OIDC_GRANT_TYPE_TOKEN_EXCHANGE,
});
const APP_TYPE = table<OidcAppType>({
  web: OIDCAppType.OIDC_APP_TYPE_WEB,
  user_agent: OIDCAppType.OIDC_APP_TYPE_USER_AGENT,
  native: OIDCAppType.OIDC_APP_TYPE_NATIVE,
});
const OIDC_AUTH = table<OidcAuthMethod>({
  basic: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC,
  post: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_POST,
  none: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE,
  private_key_jwt: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT,
});
const TOKEN_TYPE = table<OidcConfig["accessTokenType"]>({ bearer: OIDCTokenType.OIDC_TOKEN_TYPE_BEARER, jwt: OIDCTokenType.OIDC_TOKEN_TYPE_JWT });
const API_AUTH = table<ApiAuthMethod>({
  basic: APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC,
  private_key_jwt: APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT,
});

/** Without grant types, those the response types need: CODE the code grant, the ID_TOKEN types the implicit one. */
function grantsFor(responses: ResponseType[]): GrantType[] {
  const grants: GrantType[] = [];
  if (responses.includes("code")) grants.push("authorization_code");
  if (responses.some((r) => r !== "code")) grants.push("implicit");
  return grants;
}

/** A new application's configuration with every default filled in. */
export function appConfigFromProto(app: App): AppConfig {
  if (app.config.case === "api") return { type: "api", api: { authMethod: API_AUTH.fromProto(app.config.value.authMethodType, "basic") } };
  if (app.config.case !== "oidc") throw new Error("app without a configuration (validation requires one)");
  const c = app.config.value;
  return {
    type: "oidc",
    oidc: {
      redirectUris: c.redirectUris,
      responseTypes: c.responseTypes.map((r) => RESPONSE.fromProto(r, "code")),
      grantTypes:
        c.grantTypes.length > 0
          ? c.grantTypes.map((g) => GRANT.fromProto(g, "authorization_code"))
          : grantsFor(c.responseTypes.map((r) => RESPONSE.fromProto(r, "code"))),
      appType: APP_TYPE.fromProto(c.appType, "web"),
      authMethod: OIDC_AUTH.fromProto(c.authMethodType, "basic"),
      postLogoutRedirectUris: c.postLogoutRedirectUris,
      devMode: c.devMode,
      accessTokenType: TOKEN_TYPE.fromProto(c.accessTokenType, "bearer"),
      accessTokenRoleAssertion: c.accessTokenRoleAssertion,
      idTokenRoleAssertion: c.idTokenRoleAssertion,
      idTokenUserinfoAssertion: c.idTokenUserinfoAssertion,
      clockSkewMs: c.clockSkew ? durationToMs(c.clockSkew) : 0,
      additionalOrigins: c.additionalOrigins,
    },
  };
}

/** Only what a patch gives; validation has refused UNSPECIFIED in its optional enums. */
export function appPatchFromProto(patch: PatchApp): AppPatch {
  const out: AppPatch = { name: patch.name };
  if (patch.oidc) {
    const c = patch.oidc;
    const oidc: Partial<OidcConfig> = {};
    if (c.redirectUris) oidc.redirectUris = c.redirectUris.values;
    if (c.responseTypes) oidc.responseTypes = c.responseTypes.values.map((r) => RESPONSE.fromProto(r, "code"));
    if (c.grantTypes) oidc.grantTypes = c.grantTypes.values.map((g) => GRANT.fromProto(g, "authorization_code"));
    if (c.appType !== undefined) oidc.appType = APP_TYPE.fromProto(c.appType, "web");
    if (c.authMethodType !== undefined) oidc.authMethod = OIDC_AUTH.fromProto(c.authMethodType, "basic");
    if (c.postLogoutRedirectUris) oidc.postLogoutRedirectUris = c.postLogoutRedirectUris.values;
    if (c.devMode !== undefined) oidc.devMode = c.devMode;
    if (c.accessTokenType !== undefined) oidc.accessTokenType = TOKEN_TYPE.fromProto(c.accessTokenType, "bearer");
    if (c.accessTokenRoleAssertion !== undefined) oidc.accessTokenRoleAssertion = c.accessTokenRoleAssertion;
    if (c.idTokenRoleAssertion !== undefined) oidc.idTokenRoleAssertion = c.idTokenRoleAssertion;
    if (c.idTokenUserinfoAssertion !== undefined) oidc.idTokenUserinfoAssertion = c.idTokenUserinfoAssertion;
    if (c.clockSkew) oidc.clockSkewMs = durationToMs(c.clockSkew);
    if (c.additionalOrigins) oidc.additionalOrigins = c.additionalOrigins.values;
    out.oidc = oidc;
  }
  if (patch.api) out.api = patch.api.authMethodType === undefined ? {} : { authMethod: API_AUTH.fromProto(patch.api.authMethodType, "basic") };
  return out;
}

function configToProto(config: AppConfig): App["config"] {
  if (config.type === "api")
    return { case: "api", value: { $typeName: "platform.resources.app.v3alpha.APIConfig", authMethodType: API_AUTH.toProto(config.api.authMethod) } };
  const c = config.oidc;
  return {
    case: "oidc",
    value: {
      $typeName: "platform.resources.app.v3alpha.OIDCConfig",
      redirectUris: c.redirectUris,
      responseTypes: c.responseTypes.map(RESPONSE.toProto),
      grantTypes: c.grantTypes.map(GRANT.toProto),
      appType: APP_TYPE.toProto(c.appType),
      authMethodType: OIDC_AUTH.toProto(c.authMethod),
      postLogoutRedirectUris: c.postLogoutRedirectUris,
      devMode: c.devMode,
      accessTokenType: TOKEN_TYPE.toProto(c.accessTokenType),
      accessTokenRoleAssertion: c.accessTokenRoleAssertion,
      idTokenRoleAssertion: c.idTokenRoleAssertion,
      idTokenUserinfoAssertion: c.idTokenUserinfoAssertion,
      clockSkew: durationFromMs(c.clockSkewMs),
      additionalOrigins: c.additionalOrigins,
    },
  };
}

export function appToProto(view: AppView): Omit<GetApp, "$typeName"> {
  return {
    details: detailsToProto(view.details),
    projectId: view.projectId,
    app: { $typeName: "platform.resources.app.v3alpha.App", name: view.name, config: configToProto(view.config) },
    clientId: view.clientId,
    state: view.state === "active" ? AppState.ACTIVE : AppState.INACTIVE,
    hasSecret: view.hasSecret,
  };
}

export function appFilterFromProto({ filter }: AppSearchFilter): AppFilter {
  switch (filter.case) {
    case "projectId":
      return { projectId: filter.value.projectId };
    case "name":
      return { name: { value: filter.value.name, match: textMatchFromProto(filter.value.method) } };
    case "state":
      return { state: filter.value.state === AppState.ACTIVE ? "active" : "inactive" };
    case "clientId":
      return { clientId: filter.value.clientId };
    default:
      // Validation requires exactly one filter.
      throw new Error("app filter without a case");
  }
}

export function appSortFromProto(column: AppFieldName): AppSearch["sort"] {
  return column === AppFieldName.CHANGE_DATE ? "change_date" : column === AppFieldName.NAME ? "name" : "created_at";
}
