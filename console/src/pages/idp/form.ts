import { AutoLinkingOption, type IDP } from "../../../../gen/platform/resources/idp/v3alpha/idp_pb";
import {
  AzureADTenantType,
  type AppleConfig,
  type AzureADConfig,
  type GitHubConfig,
  type GitLabConfig,
  type GitLabSelfHostedConfig,
  type GoogleConfig,
  type LDAPConfig,
  type OAuthConfig,
  type OIDCConfig,
  SAMLBinding,
  type SAMLConfig,
  SAMLNameIDFormat,
} from "../../../../gen/platform/resources/idp/v3alpha/idp_types_pb";
import { KINDS, type ExtraField, type KindName } from "./kinds";

/** Any type's configuration as its Get answers it (without the client secret, private key or bind password). */
export type Config =
  GitHubConfig | GitLabConfig | GitLabSelfHostedConfig | GoogleConfig | OAuthConfig | OIDCConfig | AzureADConfig | AppleConfig | LDAPConfig | SAMLConfig;

/** An LDAP provider's settings as its form holds them: lists one item a line, the timeout in seconds. */
export interface LdapValues {
  servers: string;
  startTls: boolean;
  baseDn: string;
  bindDn: string;
  bindPassword: string;
  userBase: string;
  userObjectClasses: string;
  userFilters: string;
  timeout: string;
  rootCa: string;
  idAttribute: string;
  usernameAttribute: string;
  emailAttribute: string;
  firstNameAttribute: string;
  lastNameAttribute: string;
  preferredLanguageAttribute: string;
  phoneAttribute: string;
}

/** The attributes of an entry, in the order the form asks for them. */
export const LDAP_ATTRIBUTES = [
  ["idAttribute", "ID attribute", "The attribute that identifies the person for good, such as uid or entryUUID."],
  ["usernameAttribute", "Username attribute", "Such as uid; empty: the email."],
  ["emailAttribute", "Email attribute", "Such as mail; the address counts as not verified."],
  ["firstNameAttribute", "First name attribute", "Such as givenName."],
  ["lastNameAttribute", "Last name attribute", "Such as sn."],
  ["preferredLanguageAttribute", "Preferred language attribute", "Such as preferredLanguage."],
  ["phoneAttribute", "Phone attribute", "Such as telephoneNumber."],
] as const;
/**
 * A SAML provider's settings as its form holds them: the enums' numbers as strings. It has no
 * secret: the service makes the SP key pair itself.
 */
export interface SamlValues {
  metadataXml: string;
  binding: string;
  withSignedRequest: boolean;
  nameIdFormat: string;
  transientMappingAttributeName: string;
}

/** The request bindings offered; the API's UNSPECIFIED is HTTP-POST, shown as such. */
export const SAML_BINDINGS = [
  { value: String(SAMLBinding.SAML_BINDING_POST), label: "HTTP-POST: the browser posts the request in a form" },
  { value: String(SAMLBinding.SAML_BINDING_REDIRECT), label: "HTTP-Redirect: the request travels in the query of a redirect" },
];

export const TRANSIENT = String(SAMLNameIDFormat.SAML_NAME_ID_FORMAT_TRANSIENT);
export const SAML_NAME_ID_FORMATS = [
  { value: String(SAMLNameIDFormat.SAML_NAME_ID_FORMAT_UNSPECIFIED), label: "Unspecified: the identity provider chooses" },
  { value: String(SAMLNameIDFormat.SAML_NAME_ID_FORMAT_EMAIL_ADDRESS), label: "Email address" },
  { value: String(SAMLNameIDFormat.SAML_NAME_ID_FORMAT_PERSISTENT), label: "Persistent: the same opaque ID at every sign-in" },
  { value: TRANSIENT, label: "Transient: a new ID at every sign-in, the person identified by an attribute" },
];

/**
 * A provider as its form holds it, whatever its type: the fields a type lacks stay empty and
 * are never sent. The secret (a client secret; Apple's private key) is write-only: empty on
 * the provider's page.
 */
export interface IdpValues {
  kind: KindName;
  name: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  issuer: string;
  isIdTokenMapping: boolean;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userEndpoint: string;
  idAttribute: string;
  /** Azure AD: an AzureADTenantType's number, or TENANT_ID for the one tenant `tenantId` names. */
  tenantKind: string;
  tenantId: string;
  isEmailVerified: boolean;
  teamId: string;
  keyId: string;
  ldap: LdapValues;
  saml: SamlValues;
  accounts: AccountFlag[];
  autoLinking: string;
}

export const TENANT_ID = "tenantId";
export const TENANT_KINDS = [
  { value: String(AzureADTenantType.AZURE_AD_TENANT_TYPE_COMMON), label: "Any Microsoft account: work, school or personal (common)" },
  { value: String(AzureADTenantType.AZURE_AD_TENANT_TYPE_ORGANIZATIONS), label: "Work and school accounts of any organization (organizations)" },
  { value: String(AzureADTenantType.AZURE_AD_TENANT_TYPE_CONSUMERS), label: "Personal Microsoft accounts only (consumers)" },
  { value: TENANT_ID, label: "The accounts of one tenant" },
];

export const ACCOUNT_OPTIONS = [
  { value: "isManualCreationAllowed", label: "People may create an account from their external one, on a form filled in from it" },
  { value: "isManualLinkingAllowed", label: "People may link their external account to an account they have, with its password" },
  { value: "isAutoCreation", label: "An account is created without asking at the first sign-in" },
  { value: "isAutoUpdate", label: "The account's name and email follow the provider's at every sign-in" },
] as const;
type AccountFlag = (typeof ACCOUNT_OPTIONS)[number]["value"];

export const AUTO_LINKING = [
  { value: String(AutoLinkingOption.UNSPECIFIED), label: "Never" },
  { value: String(AutoLinkingOption.USERNAME), label: "When an account has the external username" },
  { value: String(AutoLinkingOption.EMAIL), label: "When an account has the external email, verified on both sides (none when several have it)" },
];

/** A new provider offers both ways in: without either, a person unknown here gets an error page. */
export const NEW_IDP: IdpValues = {
  kind: "github",
  name: "",
  clientId: "",
  clientSecret: "",
  scopes: "",
  issuer: "",
  isIdTokenMapping: false,
  authorizationEndpoint: "",
  tokenEndpoint: "",
  userEndpoint: "",
  idAttribute: "",
  tenantKind: String(AzureADTenantType.AZURE_AD_TENANT_TYPE_COMMON),
  tenantId: "",
  isEmailVerified: false,
  teamId: "",
  keyId: "",
  // The usual inetOrgPerson entry: what most directories have.
  ldap: {
    servers: "",
    startTls: false,
    baseDn: "",
    bindDn: "",
    bindPassword: "",
    userBase: "",
    userObjectClasses: "inetOrgPerson",
    userFilters: "uid\nmail",
    timeout: "",
    rootCa: "",
    idAttribute: "uid",
    usernameAttribute: "uid",
    emailAttribute: "mail",
    firstNameAttribute: "givenName",
    lastNameAttribute: "sn",
    preferredLanguageAttribute: "preferredLanguage",
    phoneAttribute: "telephoneNumber",
  },
  saml: {
    metadataXml: "",
    binding: String(SAMLBinding.SAML_BINDING_POST),
    withSignedRequest: false,
    nameIdFormat: String(SAMLNameIDFormat.SAML_NAME_ID_FORMAT_UNSPECIFIED),
    transientMappingAttributeName: "",
  },
  accounts: ["isManualCreationAllowed", "isManualLinkingAllowed"],
  autoLinking: String(AutoLinkingOption.UNSPECIFIED),
};

/** Scopes as typed: separated by spaces (as OAuth writes them), commas or lines. */
export function scopeList(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

export function idpValues(kind: KindName, idp: IDP | undefined, config: Config | undefined): IdpValues {
  // Each type's configuration has some of these fields.
  const c = config as
    | Partial<
        Pick<OIDCConfig, "clientId" | "scopes" | "issuer" | "isIdTokenMapping"> &
          Pick<OAuthConfig, "authorizationEndpoint" | "tokenEndpoint" | "userEndpoint" | "idAttribute"> &
          Pick<AzureADConfig, "tenant" | "isEmailVerified"> &
          Pick<AppleConfig, "teamId" | "keyId">
      >
    | undefined;
  const tenant = c?.tenant?.type;
  return {
    kind,
    name: idp?.name ?? "",
    clientId: c?.clientId ?? "",
    clientSecret: "",
    scopes: (c?.scopes ?? []).join(" "),
    issuer: c?.issuer ?? "",
    isIdTokenMapping: c?.isIdTokenMapping ?? false,
    authorizationEndpoint: c?.authorizationEndpoint ?? "",
    tokenEndpoint: c?.tokenEndpoint ?? "",
    userEndpoint: c?.userEndpoint ?? "",
    idAttribute: c?.idAttribute ?? "",
    tenantKind: tenant?.case === "tenantId" ? TENANT_ID : String(tenant?.case === "tenantType" ? tenant.value : AzureADTenantType.AZURE_AD_TENANT_TYPE_COMMON),
    tenantId: tenant?.case === "tenantId" ? tenant.value : "",
    isEmailVerified: c?.isEmailVerified ?? false,
    teamId: c?.teamId ?? "",
    keyId: c?.keyId ?? "",
    ldap: kind === "ldap" ? ldapValues(config as LDAPConfig | undefined) : NEW_IDP.ldap,
    saml: kind === "saml" ? samlValues(config as SAMLConfig | undefined) : NEW_IDP.saml,
    accounts: ACCOUNT_OPTIONS.filter((o) => idp?.options?.[o.value]).map((o) => o.value),
    autoLinking: String(idp?.options?.autoLinking ?? AutoLinkingOption.UNSPECIFIED),
  };
}

function ldapValues(c: LDAPConfig | undefined): LdapValues {
  const a = c?.attributes;
  const seconds = c?.timeout ? Number(c.timeout.seconds) + c.timeout.nanos / 1e9 : undefined;
  return {
    servers: (c?.servers ?? []).join("\n"),
    startTls: c?.startTls ?? false,
    baseDn: c?.baseDn ?? "",
    bindDn: c?.bindDn ?? "",
    bindPassword: "",
    userBase: c?.userBase ?? "",
    userObjectClasses: (c?.userObjectClasses ?? []).join("\n"),
    userFilters: (c?.userFilters ?? []).join("\n"),
    timeout: seconds === undefined ? "" : String(seconds),
    rootCa: c?.rootCa ?? "",
    idAttribute: a?.idAttribute ?? "",
    usernameAttribute: a?.usernameAttribute ?? "",
    emailAttribute: a?.emailAttribute ?? "",
    firstNameAttribute: a?.firstNameAttribute ?? "",
    lastNameAttribute: a?.lastNameAttribute ?? "",
    preferredLanguageAttribute: a?.preferredLanguageAttribute ?? "",
    phoneAttribute: a?.phoneAttribute ?? "",
  };
}

function samlValues(c: SAMLConfig | undefined): SamlValues {
  return {
    metadataXml: c?.metadataXml ?? "",
    binding: String(c?.binding || SAMLBinding.SAML_BINDING_POST),
    withSignedRequest: c?.withSignedRequest ?? false,
    nameIdFormat: String(c?.nameIdFormat ?? SAMLNameIDFormat.SAML_NAME_ID_FORMAT_UNSPECIFIED),
    transientMappingAttributeName: c?.transientMappingAttributeName ?? "",
  };
}

/** A SAML provider's configuration, every field (a patch sends them all); the mapping attribute only with the transient format. */
function samlConfig(s: SamlValues) {
  return {
    metadataXml: s.metadataXml,
    binding: Number(s.binding) as SAMLBinding,
    withSignedRequest: s.withSignedRequest,
    nameIdFormat: Number(s.nameIdFormat) as SAMLNameIDFormat,
    transientMappingAttributeName: s.nameIdFormat === TRANSIENT ? s.transientMappingAttributeName.trim() : "",
  };
}

/** The lines of a list field, trimmed, without empty ones. */
export const listOf = (text: string) =>
  text
    .split(/\n/)
    .map((line) => line.trim())
    .filter(Boolean);

/** An LDAP provider's configuration, without the bind password; an empty timeout is none (the service's cap). */
function ldapConnection(l: LdapValues) {
  const seconds = Number(l.timeout.trim());
  const whole = Math.floor(seconds);
  return {
    servers: listOf(l.servers),
    startTls: l.startTls,
    baseDn: l.baseDn.trim(),
    bindDn: l.bindDn.trim(),
    userBase: l.userBase.trim(),
    userObjectClasses: listOf(l.userObjectClasses),
    userFilters: listOf(l.userFilters),
    ...(l.timeout.trim() !== "" && { timeout: { seconds: BigInt(whole), nanos: Math.round((seconds - whole) * 1e9) } }),
    rootCa: l.rootCa.trim() === "" ? "" : l.rootCa,
    attributes: Object.fromEntries(LDAP_ATTRIBUTES.map(([field]) => [field, l[field].trim()])),
  };
}

/** Name and options: a patch replaces the options whole. */
function typeAgnostic(v: IdpValues) {
  const options = Object.fromEntries(ACCOUNT_OPTIONS.map((o) => [o.value, v.accounts.includes(o.value)]));
  return { name: v.name.trim(), options: { ...options, autoLinking: Number(v.autoLinking) as AutoLinkingOption } };
}

/** A type's own setting as its configuration message takes it. */
function extraValue(v: IdpValues, field: ExtraField) {
  switch (field) {
    case "isIdTokenMapping":
    case "isEmailVerified":
      return v[field];
    case "tenant":
      return {
        type:
          v.tenantKind === TENANT_ID
            ? { case: "tenantId" as const, value: v.tenantId.trim() }
            : { case: "tenantType" as const, value: Number(v.tenantKind) as AzureADTenantType },
      };
    default:
      return v[field].trim();
  }
}

/** The configuration of the values' type, without the secret. */
function connection(v: IdpValues) {
  const extra = Object.fromEntries(KINDS[v.kind].extra.map((field) => [field, extraValue(v, field)]));
  return { clientId: v.clientId.trim(), scopes: scopeList(v.scopes), ...extra };
}

/** The secret as its type's field: a client secret, or Apple's private key (a PEM, its lines kept). */
function secret(v: IdpValues) {
  return { [KINDS[v.kind].secret ?? "clientSecret"]: v.clientSecret };
}

/** The `idp` of a Create<Type>IDP request. */
export function createRequest(v: IdpValues) {
  if (KINDS[v.kind].protocol === "saml") return { idp: typeAgnostic(v), config: samlConfig(v.saml) };
  if (KINDS[v.kind].protocol === "ldap") return { idp: typeAgnostic(v), config: { ...ldapConnection(v.ldap), bindPassword: v.ldap.bindPassword } };
  return { idp: typeAgnostic(v), config: { ...connection(v), ...secret(v) } };
}

/** The `idp` of a Patch<Type>IDP request: every setting of the form; the secret only when one is typed. */
export function patchRequest(v: IdpValues) {
  if (KINDS[v.kind].protocol === "saml") return { idp: typeAgnostic(v), config: samlConfig(v.saml) };
  if (KINDS[v.kind].protocol === "ldap")
    return { idp: typeAgnostic(v), config: { ...ldapConnection(v.ldap), ...(v.ldap.bindPassword !== "" && { bindPassword: v.ldap.bindPassword }) } };
  return { idp: typeAgnostic(v), config: { ...connection(v), ...(v.clientSecret !== "" && secret(v)) } };
}
