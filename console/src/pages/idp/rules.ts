import { listOf, scopeList, TENANT_ID, type IdpValues } from "./form";
import { KINDS, type KindName } from "./kinds";

/**
 * What the API validates of a provider (idp_types.proto, docs/api.md), checked before it is
 * sent so that each complaint stands under its field; the API's refusal of anything else
 * shows under the form.
 */
const atMost = (n: number) => ({ maxLength: { value: n, message: `At most ${n} characters.` } });

export const NAME_RULES = { required: "Give the provider a name: it is the text of its login button.", ...atMost(200) };
export const CLIENT_ID_RULES = { required: "Give the client ID the provider issued.", ...atMost(200) };
const PKCS8 = /^\s*-----BEGIN PRIVATE KEY-----[\s\S]+-----END PRIVATE KEY-----\s*$/;
/** What the API checks of Apple's key beyond its form (a P-256 key) shows under the form. */
const privateKeyProblem = (value: string) =>
  value === "" || PKCS8.test(value) || "The whole .p8 file Apple issued, from -----BEGIN PRIVATE KEY----- to -----END PRIVATE KEY-----.";

/** A new provider's secret: Apple's is the private key, the others' a client secret. */
export function newSecretRules(kind: KindName) {
  return KINDS[kind].secret
    ? { required: "Give the private key Apple issued (its .p8 file).", ...atMost(4000), validate: (value: unknown) => privateKeyProblem(String(value)) }
    : { required: "Give the client secret the provider issued.", ...atMost(200) };
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;
/** Only when the one-tenant choice is made (the API's AzureADTenant.tenant_id). */
export const TENANT_ID_RULES = {
  validate: (value: unknown, v: IdpValues) =>
    v.tenantKind !== TENANT_ID ||
    GUID.test(String(value).trim()) ||
    DOMAIN.test(String(value).trim()) ||
    "The tenant's ID (a GUID such as 72f988bf-86f1-41af-91ab-2d7cd011db47) or one of its verified domain names (such as contoso.onmicrosoft.com).",
};

/** Apple's Team ID and Key ID: ten capital letters and digits, as the developer account shows them. */
export function appleIdRules(what: string) {
  return {
    required: `Give the ${what}.`,
    validate: (value: unknown) => /^[A-Z0-9]{10}$/.test(String(value).trim()) || `The ${what} has 10 capital letters and digits, such as ABCDE12345.`,
  };
}
export const ID_ATTRIBUTE_RULES = { required: "Give the attribute of the user information that holds the user's ID, such as id or sub.", ...atMost(200) };

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text.trim());
    return (url.protocol === "https:" || url.protocol === "http:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** The issuer and the OAuth endpoints: absolute URIs of at most 1000 characters; only http(s) ones can be called. */
export function urlRules(what: string) {
  return {
    required: `Give the ${what}.`,
    ...atMost(1000),
    validate: (value: unknown) => isHttpUrl(String(value)) || "An absolute http or https URL, such as https://login.example.com.",
  };
}

function scopesProblem(text: string): string | true {
  const scopes = scopeList(text);
  if (scopes.length > 20) return "At most 20 scopes.";
  if (scopes.some((s) => s.length > 100)) return "Each scope has at most 100 characters.";
  return true;
}

export const NEW_SCOPES_RULES = { validate: (value: unknown) => scopesProblem(String(value)) };

/**
 * The settings that say where the secret goes (secretOf in src/domain/idp/model.ts), in words;
 * a type's lack the others', which never change.
 */
const AIMED = [
  ["clientId", "client ID"],
  ["issuer", "issuer"],
  ["authorizationEndpoint", "authorization endpoint"],
  ["tokenEndpoint", "token endpoint"],
  ["userEndpoint", "user endpoint"],
  ["teamId", "Team ID"],
  ["keyId", "Key ID"],
] as const;

/**
 * A saved provider's secret and scopes, against what is stored (`before`): the API keeps the
 * stored secret only for where it was given, and keeps the stored scopes when none are sent.
 */
export function settingsRules(before: IdpValues) {
  const apple = KINDS[before.kind].secret !== undefined;
  const secret = apple ? "private key" : "client secret";
  return {
    clientSecret: {
      ...atMost(apple ? 4000 : 200),
      validate: (_: unknown, v: IdpValues) => {
        const moved = AIMED.find(([field]) => v[field].trim() !== before[field]);
        if (v.clientSecret !== "") return apple ? privateKeyProblem(v.clientSecret) : true;
        return moved === undefined || `Changing the ${moved[1]} needs the ${secret} again: the stored one is kept only for the ${moved[1]} it was given for.`;
      },
    },
    scopes: {
      validate: (value: unknown) =>
        before.scopes === "" || scopeList(String(value)).length > 0
          ? scopesProblem(String(value))
          : "Scopes once set cannot be emptied (the API keeps them when none are sent): list the ones to ask for.",
    },
  };
}

/** LDAP's settings (LDAPConfig in idp_types.proto): what the API would refuse, said under the field. */
const ATTRIBUTE_NAME = /^[A-Za-z][A-Za-z0-9-]*$/;

function attributeList(what: string) {
  return {
    validate: (value: unknown) => {
      const names = listOf(String(value));
      if (names.length === 0) return `Give at least one ${what}.`;
      if (names.length > 20) return "At most 20.";
      return names.every((n) => ATTRIBUTE_NAME.test(n) && n.length <= 200) || "Names of attributes or object classes, one a line, such as uid.";
    },
  };
}

export const LDAP_RULES = {
  servers: {
    validate: (value: unknown) => {
      const servers = listOf(String(value));
      if (servers.length === 0) return "Give at least one server, such as ldaps://ldap.example.com.";
      if (servers.length > 10) return "At most 10 servers.";
      return servers.every((s) => /^ldaps?:\/\/[^/?#@\s]+\/?$/.test(s)) || "One a line, each ldaps:// or ldap:// with a host and an optional port.";
    },
  },
  baseDn: { required: "Give the DN under which people are searched, such as dc=example,dc=com.", ...atMost(1000) },
  bindDn: { required: "Give the DN of the account the service searches with.", ...atMost(1000) },
  userBase: atMost(1000),
  userObjectClasses: attributeList("object class"),
  userFilters: attributeList("attribute"),
  timeout: {
    validate: (value: unknown) => {
      const text = String(value).trim();
      const seconds = Number(text);
      return text === "" || (Number.isFinite(seconds) && seconds > 0 && seconds <= 300) || "A number of seconds above 0 and at most 300, such as 5.";
    },
  },
  rootCa: {
    ...atMost(65536),
    validate: (value: unknown) =>
      String(value).trim() === "" ||
      /^(\s*-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----\s*)+$/.test(String(value)) ||
      "PEM certificates (-----BEGIN CERTIFICATE----- …), or nothing.",
  },
  idAttribute: { required: "Give the attribute that identifies the person, such as uid.", ...atMost(200) },
  attribute: atMost(200),
  newBindPassword: { required: "Give the bind account's password.", ...atMost(1000) },
};

/** The settings that say where the bind password goes (BIND_PASSWORD_AIM in src/domain/idp/model.ts), in words. */
const LDAP_AIMED = [
  ["servers", "servers"],
  ["startTls", "StartTLS"],
  ["rootCa", "root CA"],
  ["bindDn", "bind DN"],
] as const;

/** A saved LDAP provider's bind password: needed again when where it goes changes. */
export function bindPasswordRules(before: IdpValues) {
  return {
    ...atMost(1000),
    validate: (_: unknown, v: IdpValues) => {
      const norm = (x: string | boolean) => (typeof x === "string" ? listOf(x).join("\n") : x);
      const moved = LDAP_AIMED.find(([field]) => norm(v.ldap[field]) !== norm(before.ldap[field]));
      return (
        v.ldap.bindPassword !== "" ||
        moved === undefined ||
        `Changing the ${moved[1]} needs the bind password again: the stored one is kept only for the ${moved[1]} it was given for.`
      );
    },
  };
}

/**
 * SAML's settings (SAMLConfig in idp_types.proto). What the service finds wrong in the
 * metadata itself (not SAML metadata, no single sign-on service for the binding, no signing
 * certificate, signed requests wanted) is its refusal, shown under the form.
 */
export const SAML_RULES = {
  metadataXml: {
    required: "Give the identity provider's metadata: the XML it publishes, starting with <EntityDescriptor or <?xml.",
    ...atMost(262144),
    validate: (value: unknown) => String(value).trim().startsWith("<") || "XML text, starting with <EntityDescriptor or <?xml.",
  },
  /** Asked only with the transient format (unmounted otherwise, so not checked): the API refuses that format without it. */
  transientMappingAttributeName: {
    required: "Give the attribute of the assertion that identifies the person for good: a transient NameID changes at every sign-in.",
    ...atMost(200),
  },
};
