import { useWatch, type Control } from "react-hook-form";
import { CheckboxesInput, CheckboxInput, RadioInput } from "../../components/ChoiceInputs";
import { TextInput } from "../../components/TextInput";
import { TextLinesInput } from "../../components/TextLinesInput";
import {
  ACCOUNT_OPTIONS,
  AUTO_LINKING,
  LDAP_ATTRIBUTES,
  SAML_BINDINGS,
  SAML_NAME_ID_FORMATS,
  TENANT_ID,
  TENANT_KINDS,
  TRANSIENT,
  type IdpValues,
} from "./form";
import { KINDS, type KindName } from "./kinds";
import {
  appleIdRules,
  bindPasswordRules,
  CLIENT_ID_RULES,
  ID_ATTRIBUTE_RULES,
  LDAP_RULES,
  NAME_RULES,
  NEW_SCOPES_RULES,
  newSecretRules,
  SAML_RULES,
  settingsRules,
  TENANT_ID_RULES,
  urlRules,
} from "./rules";

const ENDPOINTS = [
  {
    field: "authorizationEndpoint",
    label: "Authorization endpoint",
    what: "authorization endpoint",
    description: "Where people are sent to sign in at the provider.",
  },
  { field: "tokenEndpoint", label: "Token endpoint", what: "token endpoint", description: "Where the service redeems the code with the client ID and secret." },
  { field: "userEndpoint", label: "User endpoint", what: "user endpoint", description: "Where the service reads the person's details with the access token." },
] as const;

/**
 * The settings of a provider of one type, in the create dialog and on its page alike. On the
 * page (`saved`: what is stored) the secret may stay empty, as far as the API allows.
 */
export function IdpFields({ control, kind, saved }: { control: Control<IdpValues>; kind: KindName; saved?: IdpValues }) {
  return (
    <>
      <TextInput control={control} name="name" label="Name" description="The text of its button on the login page." rules={NAME_RULES} />
      <ProtocolFields control={control} kind={kind} saved={saved} />
      <CheckboxesInput control={control} name="accounts" label="Accounts" options={[...ACCOUNT_OPTIONS]} />
      <RadioInput
        control={control}
        name="autoLinking"
        label="Propose an existing account to link"
        description="The person confirms with that account's password."
        options={AUTO_LINKING}
      />
    </>
  );
}

/** The settings of the type's protocol. */
function ProtocolFields({ control, kind, saved }: { control: Control<IdpValues>; kind: KindName; saved?: IdpValues }) {
  switch (KINDS[kind].protocol) {
    case "ldap":
      return <LdapFields control={control} saved={saved} />;
    case "saml":
      return <SamlFields control={control} />;
    default:
      return <OAuthFields control={control} kind={kind} saved={saved} />;
  }
}

/** The client registered at an OAuth or OpenID Connect provider, and where the provider is. */
function OAuthFields({ control, kind, saved }: { control: Control<IdpValues>; kind: KindName; saved?: IdpValues }) {
  const k = KINDS[kind];
  const rules = saved && settingsRules(saved);
  const tenantKind = useWatch({ control, name: "tenantKind" });
  const secretRules = rules ? rules.clientSecret : newSecretRules(kind);
  return (
    <>
      <TextInput control={control} name="clientId" label={k.secret ? "Services ID" : "Client ID"} description={k.clientHelp} rules={CLIENT_ID_RULES} />
      {k.extra.includes("teamId") && (
        <TextInput
          control={control}
          name="teamId"
          label="Team ID"
          description="The Team ID of the Apple developer account (Membership details)."
          rules={appleIdRules("Team ID")}
        />
      )}
      {k.extra.includes("keyId") && (
        <TextInput
          control={control}
          name="keyId"
          label="Key ID"
          description="The Key ID of the private key registered for Sign in with Apple (Certificates, Identifiers & Profiles › Keys)."
          rules={appleIdRules("Key ID")}
        />
      )}
      {k.secret ? (
        // Apple has no client secret: the service signs a short-lived one with this key for every sign-in.
        <TextLinesInput
          control={control}
          name="clientSecret"
          label="Private key"
          rows={6}
          description={
            saved
              ? "Write-only: empty keeps the stored key. Needed again when the Services ID, Team ID or Key ID changes."
              : "The content of the .p8 file Apple issued (-----BEGIN PRIVATE KEY----- …). Write-only: stored encrypted and never shown again."
          }
          rules={secretRules}
        />
      ) : (
        <TextInput
          control={control}
          name="clientSecret"
          label="Client secret"
          type="password"
          autoComplete="off"
          description={
            saved
              ? "Write-only: empty keeps the stored one. Needed again when the client ID or where it goes changes."
              : "Write-only: stored encrypted and never shown again."
          }
          rules={secretRules}
        />
      )}
      <TextInput control={control} name="scopes" label="Scopes" description={k.scopesHelp} rules={rules ? rules.scopes : NEW_SCOPES_RULES} />
      {k.extra.includes("tenant") && (
        <>
          <RadioInput control={control} name="tenantKind" label="Microsoft accounts" description="Whose accounts may sign in." options={TENANT_KINDS} />
          {tenantKind === TENANT_ID && (
            <TextInput
              control={control}
              name="tenantId"
              label="Tenant"
              description="The tenant's ID (Directory (tenant) ID of the app registration) or one of its verified domain names, such as contoso.onmicrosoft.com."
              rules={TENANT_ID_RULES}
            />
          )}
        </>
      )}
      {k.extra.includes("isEmailVerified") && (
        <CheckboxInput control={control} name="isEmailVerified" label="Count the email addresses Microsoft gives as verified (its ID tokens do not say)" />
      )}
      {k.extra.includes("issuer") && <TextInput control={control} name="issuer" label="Issuer" description={k.issuerHelp} rules={urlRules("issuer URL")} />}
      {k.extra.includes("isIdTokenMapping") && (
        <CheckboxInput control={control} name="isIdTokenMapping" label="Take the person's details from the ID token, not the userinfo endpoint" />
      )}
      {ENDPOINTS.filter((e) => k.extra.includes(e.field)).map((e) => (
        <TextInput key={e.field} control={control} name={e.field} label={e.label} description={e.description} rules={urlRules(e.what)} />
      ))}
      {k.extra.includes("idAttribute") && (
        <TextInput
          control={control}
          name="idAttribute"
          label="ID attribute"
          description="The attribute of the user endpoint's answer that holds the person's unique ID, such as id or sub."
          rules={ID_ATTRIBUTE_RULES}
        />
      )}
    </>
  );
}

/**
 * An LDAP directory: where it is, the account the service searches with, how a person's entry
 * is found by the login name they type, and which of its attributes describe them.
 */
function LdapFields({ control, saved }: { control: Control<IdpValues>; saved?: IdpValues }) {
  return (
    <>
      <TextLinesInput
        control={control}
        name="ldap.servers"
        label="Servers"
        description="One a line, ldaps:// or ldap:// with host and optional port, tried in order until one answers."
        rules={LDAP_RULES.servers}
      />
      <CheckboxInput control={control} name="ldap.startTls" label="Upgrade ldap:// connections with StartTLS before binding" />
      <TextLinesInput
        control={control}
        name="ldap.rootCa"
        label="Root CA"
        description="PEM certificate of a CA trusted besides the system's, for ldaps:// and StartTLS. Certificates are always verified."
        rows={4}
        rules={LDAP_RULES.rootCa}
      />
      <TextInput
        control={control}
        name="ldap.baseDn"
        label="Base DN"
        description="Where people are searched, such as dc=example,dc=com."
        rules={LDAP_RULES.baseDn}
      />
      <TextInput
        control={control}
        name="ldap.userBase"
        label="User base"
        description="Where people are, relative to the base DN (such as ou=people); empty: the whole base DN."
        rules={LDAP_RULES.userBase}
      />
      <TextInput control={control} name="ldap.bindDn" label="Bind DN" description="The account the service searches with." rules={LDAP_RULES.bindDn} />
      <TextInput
        control={control}
        name="ldap.bindPassword"
        label="Bind password"
        type="password"
        autoComplete="off"
        description={
          saved
            ? "Write-only: empty keeps the stored one. Needed again when the servers, StartTLS, root CA or bind DN change."
            : "Write-only: stored encrypted and never shown again."
        }
        rules={saved ? bindPasswordRules(saved) : LDAP_RULES.newBindPassword}
      />
      <TextLinesInput
        control={control}
        name="ldap.userObjectClasses"
        label="User object classes"
        description="One a line: a person's entry has all of them."
        rules={LDAP_RULES.userObjectClasses}
      />
      <TextLinesInput
        control={control}
        name="ldap.userFilters"
        label="Login name attributes"
        description="One a line: the entry whose attribute equals the typed login name, any of them, is the person's."
        rules={LDAP_RULES.userFilters}
      />
      <TextInput
        control={control}
        name="ldap.timeout"
        label="Timeout (seconds)"
        description="How long each server may take to connect and to answer; the service's cap bounds it and is used when empty."
        rules={LDAP_RULES.timeout}
      />
      {LDAP_ATTRIBUTES.map(([field, label, description]) => (
        <TextInput
          key={field}
          control={control}
          name={`ldap.${field}`}
          label={label}
          description={description}
          rules={field === "idAttribute" ? LDAP_RULES.idAttribute : LDAP_RULES.attribute}
        />
      ))}
    </>
  );
}

/**
 * A SAML identity provider: its metadata (the service checks it when saved) and how the
 * service asks it. No secret: the service makes the SP key pair, published in its metadata.
 */
function SamlFields({ control }: { control: Control<IdpValues> }) {
  const nameIdFormat = useWatch({ control, name: "saml.nameIdFormat" });
  return (
    <>
      <TextLinesInput
        control={control}
        name="saml.metadataXml"
        label="Metadata XML"
        description="The identity provider's SAML metadata (an EntityDescriptor with its single sign-on service and signing certificate), pasted or loaded from its file."
        rows={8}
        rules={SAML_RULES.metadataXml}
        fromFile={{ label: "Load from an .xml file…", types: ["text/xml", "application/xml", "application/samlmetadata+xml", ".xml"] }}
      />
      <RadioInput
        control={control}
        name="saml.binding"
        label="Request binding"
        description="How the authentication request reaches the identity provider; its answer always comes back by HTTP-POST."
        options={SAML_BINDINGS}
      />
      <CheckboxInput control={control} name="saml.withSignedRequest" label="Sign the authentication requests (with the key of this service's metadata)" />
      <RadioInput
        control={control}
        name="saml.nameIdFormat"
        label="NameID format"
        description="The format of the subject's ID asked for: it identifies the person unless it is transient."
        options={SAML_NAME_ID_FORMATS}
      />
      {nameIdFormat === TRANSIENT && (
        <TextInput
          control={control}
          name="saml.transientMappingAttributeName"
          label="Mapping attribute"
          description="The attribute of the assertion that identifies the person for good, such as uid or employeeNumber."
          rules={SAML_RULES.transientMappingAttributeName}
        />
      )}
    </>
  );
}
