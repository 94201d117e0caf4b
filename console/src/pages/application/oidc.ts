import {
  APIAuthMethodType,
  OIDCAppType,
  OIDCAuthMethodType,
  OIDCGrantType,
  OIDCResponseType,
  OIDCTokenType,
} from "../../../../gen/platform/resources/app/v3alpha/app_pb";
import type { Option } from "../../components/ChoiceInputs";
import { lines } from "../../components/TextLinesInput";

/**
 * The choices of an application's configuration in people's words, and the form values
 * both the new-application dialog and the application page edit (redirect URIs and flows).
 */
const option = (value: number, label: string): Option => ({ value: String(value), label });

export const APP_TYPES = [
  option(OIDCAppType.OIDC_APP_TYPE_WEB, "Web: a server-side application that keeps a secret"),
  option(OIDCAppType.OIDC_APP_TYPE_USER_AGENT, "User agent: a single-page application in the browser"),
  option(OIDCAppType.OIDC_APP_TYPE_NATIVE, "Native: a mobile or desktop application"),
];

export const AUTH_METHODS = [
  option(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC, "Client secret in the Authorization header (client_secret_basic)"),
  option(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_POST, "Client secret in the request body (client_secret_post)"),
  option(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE, "None: a public client, with PKCE (none)"),
  option(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT, "A JWT signed with one of the application's keys (private_key_jwt)"),
];

export const API_AUTH_METHODS = [
  option(APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC, "Client secret (client_secret_basic)"),
  option(APIAuthMethodType.API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT, "A JWT signed with one of the application's keys (private_key_jwt)"),
];

export const RESPONSE_TYPES = [
  option(OIDCResponseType.OIDC_RESPONSE_TYPE_CODE, "Code"),
  option(OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN, "ID token"),
  option(OIDCResponseType.OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN, "ID token and access token"),
];

export const GRANT_TYPES = [
  option(OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE, "Authorization code"),
  option(OIDCGrantType.OIDC_GRANT_TYPE_IMPLICIT, "Implicit"),
  option(OIDCGrantType.OIDC_GRANT_TYPE_REFRESH_TOKEN, "Refresh token"),
  option(OIDCGrantType.OIDC_GRANT_TYPE_TOKEN_EXCHANGE, "Token exchange"),
];

export const TOKEN_TYPES = [
  option(OIDCTokenType.OIDC_TOKEN_TYPE_BEARER, "Opaque (bearer), checked by introspection"),
  option(OIDCTokenType.OIDC_TOKEN_TYPE_JWT, "JWT, verifiable with the instance's keys"),
];

/** Redirect URIs and flows, as a form holds them. */
export interface FlowValues {
  redirectUris: string;
  postLogoutRedirectUris: string;
  responseTypes: string[];
  grantTypes: string[];
  devMode: boolean;
}

/**
 * What each kind of client usually needs: a web server keeps a secret; a browser or a device
 * cannot, so it is public and uses PKCE; a device keeps its sign-in with a refresh token.
 */
export function defaultsFor(appType: string): { authMethod: string; responseTypes: string[]; grantTypes: string[] } {
  const code = [String(OIDCResponseType.OIDC_RESPONSE_TYPE_CODE)];
  const authorizationCode = String(OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE);
  switch (Number(appType)) {
    case OIDCAppType.OIDC_APP_TYPE_USER_AGENT:
      return { authMethod: String(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE), responseTypes: code, grantTypes: [authorizationCode] };
    case OIDCAppType.OIDC_APP_TYPE_NATIVE:
      return {
        authMethod: String(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_NONE),
        responseTypes: code,
        grantTypes: [authorizationCode, String(OIDCGrantType.OIDC_GRANT_TYPE_REFRESH_TOKEN)],
      };
    default:
      return { authMethod: String(OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC), responseTypes: code, grantTypes: [authorizationCode] };
  }
}

/** The form's flow values as the API takes them. */
export function flowConfig(v: FlowValues) {
  return {
    redirectUris: lines(v.redirectUris),
    postLogoutRedirectUris: lines(v.postLogoutRedirectUris),
    responseTypes: v.responseTypes.map(Number) as OIDCResponseType[],
    grantTypes: v.grantTypes.map(Number) as OIDCGrantType[],
    devMode: v.devMode,
  };
}
