import type { DescMessage, DescMethodUnary } from "@bufbuild/protobuf";
import { ProviderType } from "../../../../gen/platform/resources/idp/v3alpha/idp_pb";
import { PlatformIdentityProviders } from "../../../../gen/platform/resources/idp/v3alpha/idp_service_pb";

/** A type's own settings besides the client ID, secret and scopes every type has. */
export type ExtraField =
  | "issuer"
  | "isIdTokenMapping"
  | "authorizationEndpoint"
  | "tokenEndpoint"
  | "userEndpoint"
  | "idAttribute"
  | "tenant"
  | "isEmailVerified"
  | "teamId"
  | "keyId";

/**
 * Create, Patch and Get of one type. Typed loosely on purpose: the types' messages
 * differ only in their configuration, which the form builds per type (form.ts).
 */
type Unary = DescMethodUnary<DescMessage, DescMessage>;

export interface Kind {
  label: string;
  /**
   * How people sign in: at the provider's pages, back through the callback (OAuth, OpenID
   * Connect) or through the provider's own assertion consumer service (SAML), or on a form of
   * the login pages that a directory checks (LDAP).
   */
  protocol: "oauth" | "ldap" | "saml";
  /** The type in the create dialog's choice: what it connects to. */
  choice: string;
  type: ProviderType;
  extra: readonly ExtraField[];
  /** Where an administrator registers the client and finds its ID and secret. */
  clientHelp: string;
  /** Apple's secret is a private key (its privateKey field), the others' a client secret. */
  secret?: "privateKey";
  /** What the scopes are and what an empty list asks for (src/upstream-idps/clients.ts). */
  scopesHelp: string;
  /** What the issuer is, for the types that have one. */
  issuerHelp?: string;
  create: Unary;
  patch: Unary;
  get: Unary;
}

const OIDC_SCOPES = "Separated by spaces. Empty: openid profile email; openid is always asked for.";
const m = PlatformIdentityProviders.method;

export type KindName = "github" | "google" | "azureAd" | "apple" | "gitlab" | "gitlabSelfHosted" | "oidc" | "oauth" | "ldap" | "saml";

/** The provider types the API creates, in the order the create dialog offers them. */
export const KINDS: Record<KindName, Kind> = {
  github: {
    label: "GitHub",
    choice: "GitHub: people sign in with their GitHub.com account",
    protocol: "oauth",
    type: ProviderType.GITHUB,
    extra: [],
    clientHelp: "From an OAuth app at GitHub (Settings › Developer settings › OAuth Apps).",
    scopesHelp: "Separated by spaces. Empty: read:user user:email (without user:email, GitHub gives only a public address, not known to be verified).",
    create: m.createGitHubIDP,
    patch: m.patchGitHubIDP,
    get: m.getGitHubIDP,
  },
  google: {
    label: "Google",
    choice: "Google: people sign in with their Google account",
    protocol: "oauth",
    type: ProviderType.GOOGLE,
    extra: [],
    clientHelp: "From an OAuth client ID of type Web application in the Google Cloud console (APIs & Services › Credentials).",
    scopesHelp: OIDC_SCOPES,
    create: m.createGoogleIDP,
    patch: m.patchGoogleIDP,
    get: m.getGoogleIDP,
  },
  azureAd: {
    label: "Microsoft Entra ID",
    choice: "Microsoft Entra ID (Azure AD): people sign in with a work, school or personal Microsoft account",
    type: ProviderType.AZURE_AD,
    protocol: "oauth",
    extra: ["tenant", "isEmailVerified"],
    clientHelp:
      "The application (client) ID of an app registration in the Microsoft Entra admin center (Applications › App registrations), and a client secret of it (Certificates & secrets).",
    scopesHelp: OIDC_SCOPES,
    create: m.createAzureADIDP,
    patch: m.patchAzureADIDP,
    get: m.getAzureADIDP,
  },
  apple: {
    label: "Apple",
    choice: "Apple: people sign in with their Apple Account",
    type: ProviderType.APPLE,
    protocol: "oauth",
    extra: ["teamId", "keyId"],
    secret: "privateKey",
    clientHelp:
      "The identifier of a Services ID with Sign in with Apple enabled (Apple Developer › Certificates, Identifiers & Profiles › Identifiers), such as com.example.signin.",
    scopesHelp: "Separated by spaces. Empty: name email (Apple tells the name at the first sign-in only); openid is always asked for.",
    create: m.createAppleIDP,
    patch: m.patchAppleIDP,
    get: m.getAppleIDP,
  },
  gitlab: {
    label: "GitLab",
    choice: "GitLab: people sign in with their GitLab.com account",
    protocol: "oauth",
    type: ProviderType.GITLAB,
    extra: [],
    clientHelp: "From an application at GitLab.com (User settings › Applications, or a group's).",
    scopesHelp: OIDC_SCOPES,
    create: m.createGitLabIDP,
    patch: m.patchGitLabIDP,
    get: m.getGitLabIDP,
  },
  gitlabSelfHosted: {
    label: "GitLab self-hosted",
    choice: "GitLab self-hosted: your own GitLab installation",
    protocol: "oauth",
    type: ProviderType.GITLAB_SELF_HOSTED,
    extra: ["issuer"],
    clientHelp: "From an application of your GitLab (User settings › Applications, or the Admin Area's).",
    scopesHelp: OIDC_SCOPES,
    issuerHelp: "The base URL of the installation, such as https://gitlab.example.com.",
    create: m.createGitLabSelfHostedIDP,
    patch: m.patchGitLabSelfHostedIDP,
    get: m.getGitLabSelfHostedIDP,
  },
  oidc: {
    label: "OpenID Connect",
    choice: "OpenID Connect: any provider with a discovery document",
    protocol: "oauth",
    type: ProviderType.OIDC,
    extra: ["issuer", "isIdTokenMapping"],
    clientHelp: "The client registered at the provider for this service (confidential, authorization code flow).",
    scopesHelp: OIDC_SCOPES,
    issuerHelp: "The provider's issuer URL: its discovery document is read from <issuer>/.well-known/openid-configuration.",
    create: m.createOIDCIDP,
    patch: m.patchOIDCIDP,
    get: m.getOIDCIDP,
  },
  oauth: {
    label: "OAuth 2.0",
    choice: "OAuth 2.0: any provider with an authorization, token and user endpoint",
    protocol: "oauth",
    type: ProviderType.OAUTH,
    extra: ["authorizationEndpoint", "tokenEndpoint", "userEndpoint", "idAttribute"],
    clientHelp: "The client registered at the provider for this service (authorization code flow; the secret is sent in the request body).",
    scopesHelp: "Separated by spaces, as the provider names them. Empty: none are asked for.",
    create: m.createOAuthIDP,
    patch: m.patchOAuthIDP,
    get: m.getOAuthIDP,
  },
  ldap: {
    label: "LDAP",
    choice: "LDAP: people sign in with their directory's login name and password",
    protocol: "ldap",
    type: ProviderType.LDAP,
    extra: [],
    clientHelp: "",
    scopesHelp: "",
    create: m.createLDAPIDP,
    patch: m.patchLDAPIDP,
    get: m.getLDAPIDP,
  },
  saml: {
    label: "SAML 2.0",
    choice: "SAML 2.0: any identity provider with SAML metadata",
    protocol: "saml",
    type: ProviderType.SAML,
    extra: [],
    clientHelp: "",
    scopesHelp: "",
    create: m.createSAMLIDP,
    patch: m.patchSAMLIDP,
    get: m.getSAMLIDP,
  },
};

export const KIND_NAMES = Object.keys(KINDS) as KindName[];

/** The console's name of a provider type; undefined for a type the API cannot create. */
export function kindOf(type: ProviderType): KindName | undefined {
  return KIND_NAMES.find((name) => KINDS[name].type === type);
}

export function typeLabel(type: ProviderType): string {
  const kind = kindOf(type);
  return kind ? KINDS[kind].label : (ProviderType[type] ?? "Unknown type");
}
