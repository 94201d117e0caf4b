import { scopeList, type IdpValues } from "./form";

/**
 * What the API validates of a provider (idp_types.proto, docs/api.md), checked before it is
 * sent so that each complaint stands under its field; the API's refusal of anything else
 * shows under the form.
 */
const atMost = (n: number) => ({ maxLength: { value: n, message: `At most ${n} characters.` } });

export const NAME_RULES = { required: "Give the provider a name: it is the text of its login button.", ...atMost(200) };
export const CLIENT_ID_RULES = { required: "Give the client ID the provider issued.", ...atMost(200) };
export const NEW_SECRET_RULES = { required: "Give the client secret the provider issued.", ...atMost(200) };
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

/** The settings that say where the secret goes (CLIENT_SECRET_AIM in src/domain/idp/model.ts), in words. */
const AIMED = [
  ["clientId", "client ID"],
  ["issuer", "issuer"],
  ["authorizationEndpoint", "authorization endpoint"],
  ["tokenEndpoint", "token endpoint"],
  ["userEndpoint", "user endpoint"],
] as const;

/**
 * A saved provider's secret and scopes, against what is stored (`before`): the API keeps the
 * stored secret only for where it was given, and keeps the stored scopes when none are sent.
 */
export function settingsRules(before: IdpValues) {
  return {
    clientSecret: {
      ...atMost(200),
      validate: (_: unknown, v: IdpValues) => {
        const moved = AIMED.find(([field]) => v[field].trim() !== before[field]);
        return (
          v.clientSecret !== "" ||
          moved === undefined ||
          `Changing the ${moved[1]} needs the client secret again: the stored one is kept only for the ${moved[1]} it was given for.`
        );
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
