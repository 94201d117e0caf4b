import { AutoLinkingOption, type IDP } from "../../../../gen/platform/resources/idp/v3alpha/idp_pb";
import type {
  GitHubConfig,
  GitLabConfig,
  GitLabSelfHostedConfig,
  GoogleConfig,
  OAuthConfig,
  OIDCConfig,
} from "../../../../gen/platform/resources/idp/v3alpha/idp_types_pb";
import { KINDS, type KindName } from "./kinds";

/** Any type's configuration as its Get answers it (without the client secret). */
export type Config = GitHubConfig | GitLabConfig | GitLabSelfHostedConfig | GoogleConfig | OAuthConfig | OIDCConfig;

/**
 * A provider as its form holds it, whatever its type: the fields a type lacks stay empty and
 * are never sent. The client secret is write-only: empty on the provider's page.
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
  accounts: AccountFlag[];
  autoLinking: string;
}

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
          Pick<OAuthConfig, "authorizationEndpoint" | "tokenEndpoint" | "userEndpoint" | "idAttribute">
      >
    | undefined;
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
    accounts: ACCOUNT_OPTIONS.filter((o) => idp?.options?.[o.value]).map((o) => o.value),
    autoLinking: String(idp?.options?.autoLinking ?? AutoLinkingOption.UNSPECIFIED),
  };
}

/** Name and options: a patch replaces the options whole. */
function typeAgnostic(v: IdpValues) {
  const options = Object.fromEntries(ACCOUNT_OPTIONS.map((o) => [o.value, v.accounts.includes(o.value)]));
  return { name: v.name.trim(), options: { ...options, autoLinking: Number(v.autoLinking) as AutoLinkingOption } };
}

/** The configuration of the values' type, without the secret. */
function connection(v: IdpValues) {
  const extra = Object.fromEntries(KINDS[v.kind].extra.map((field) => [field, field === "isIdTokenMapping" ? v.isIdTokenMapping : v[field].trim()]));
  return { clientId: v.clientId.trim(), scopes: scopeList(v.scopes), ...extra };
}

/** The `idp` of a Create<Type>IDP request. */
export function createRequest(v: IdpValues) {
  return { idp: typeAgnostic(v), config: { ...connection(v), clientSecret: v.clientSecret } };
}

/** The `idp` of a Patch<Type>IDP request: every setting of the form; the secret only when one is typed. */
export function patchRequest(v: IdpValues) {
  return { idp: typeAgnostic(v), config: { ...connection(v), ...(v.clientSecret !== "" && { clientSecret: v.clientSecret }) } };
}
