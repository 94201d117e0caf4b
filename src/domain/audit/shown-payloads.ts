import type { OidcConfig } from "../app/model.js";
import type { HttpSettings, SmtpSettings, TwilioSettings } from "../notification-provider/model.js";
import type { ProjectSpec, RoleSpec } from "../project/commands.js";
import type { TargetSpec } from "../action/target/model.js";
import type { Profile } from "../user/model.js";
import type { MembershipContextType } from "../context.js";
import type { PasswordPolicyJson } from "../user/password-policy.js";
import type { UserUpdate } from "../../store/schema.js";
import { FEATURE_DEFAULTS } from "../feature/catalog.js";
import { BRANDING_SETTINGS } from "../settings/branding.js";
import { DOMAIN_SETTINGS } from "../settings/domain.js";
import { featureSettings } from "../settings/feature.js";
import type { SettingsKind } from "../settings/kind.js";
import { LANGUAGE_SETTINGS, SUPPORTED_LANGUAGES } from "../settings/language.js";
import { LOGIN_SETTINGS } from "../settings/login.js";
import { MESSAGE_KINDS } from "../notification/kinds.js";
import { messageTextSettings } from "../settings/message-text.js";

/**
 * What the audit log shows of each event's payload: an allow-list, one entry per event type
 * the service writes, of dotted paths into the payload ("oidc.redirectUris"). A path shows
 * its value whole, so paths name leaves, never an object that could one day hold a secret;
 * whatever no path names stays hidden, and so does every payload of an undeclared type.
 * Passwords, client secrets, tokens, codes, hashes, TOTP secrets and private keys never
 * reach a payload today (the commands keep them out); public keys do, and are left out as
 * bulk of no use in a log. test/unit/event-redaction.test.ts checks the names shown here,
 * test/audit/redaction-coverage.test.ts what the written events show.
 */

const under = (at: string, names: readonly string[]) => names.map((name) => `${at}.${name}`);

const PROFILE = ["givenName", "familyName", "displayName", "nickName", "preferredLanguage", "gender"] as const satisfies readonly (keyof Profile)[];

/** The columns patchUser may change (user.changed's payload is the update itself). */
const USER_COLUMNS = [
  "username",
  "given_name",
  "family_name",
  "name",
  "nick_name",
  "preferred_language",
  "gender",
  "email",
  "email_verified",
  "phone",
  "phone_verified",
  "description",
  "access_token_type",
] as const satisfies readonly (keyof UserUpdate)[];

const OIDC_CONFIG = [
  "redirectUris",
  "responseTypes",
  "grantTypes",
  "appType",
  "authMethod",
  "postLogoutRedirectUris",
  "devMode",
  "accessTokenType",
  "accessTokenRoleAssertion",
  "idTokenRoleAssertion",
  "idTokenUserinfoAssertion",
  "clockSkewMs",
  "additionalOrigins",
] as const satisfies readonly (keyof OidcConfig)[];

/** An application's configuration as its events spread it (`type` and `oidc` or `api`). */
const APP_CONFIG = ["type", ...under("oidc", OIDC_CONFIG), "api.authMethod"];

const PASSWORD_POLICY = under("passwordPolicy", [
  "minLength",
  "requireUppercase",
  "requireLowercase",
  "requireNumber",
  "requireSymbol",
] as const satisfies readonly (keyof PasswordPolicyJson)[]);

const TARGET = ["name", "kind", "url", "timeoutMs", "mode"] as const satisfies readonly (keyof TargetSpec)[];

const PROVIDER_SETTINGS = [
  "host",
  "port",
  "tls",
  "user",
  "senderAddress",
  "senderName",
  "replyToAddress",
  "accountSid",
  "senderNumber",
  "messagingServiceSid",
  "url",
] as const satisfies readonly (keyof (SmtpSettings & TwilioSettings & HttpSettings))[];

/** An identity provider's options and configuration as proto3 JSON (idp.proto, idp_types.proto): the secret (a client secret, Apple's private key, LDAP's bind password) is taken out before. */
const IDP_OPTIONS = under("options", ["isManualLinkingAllowed", "isManualCreationAllowed", "isAutoCreation", "isAutoUpdate", "autoLinking"]);
const IDP_CONFIG = under("config", [
  "clientId",
  "scopes",
  "issuer",
  "isIdTokenMapping",
  "authorizationEndpoint",
  "tokenEndpoint",
  "userEndpoint",
  "idAttribute",
  "tenant.tenantType",
  "tenant.tenantId",
  "isEmailVerified",
  "teamId",
  "keyId",
  // LDAP, whose bind password is taken out as the client secret is.
  "servers",
  "startTls",
  "baseDn",
  "bindDn",
  "userBase",
  "userObjectClasses",
  "userFilters",
  "timeout",
  "rootCa",
  ...under("attributes", [
    "idAttribute",
    "usernameAttribute",
    "emailAttribute",
    "firstNameAttribute",
    "lastNameAttribute",
    "preferredLanguageAttribute",
    "phoneAttribute",
  ]),
  // SAML, whose SP key pair is the service's own and never part of a configuration. The
  // identity provider's metadata is left out: public, but up to 256 KiB of XML in each entry.
  "binding",
  "withSignedRequest",
  "nameIdFormat",
  "transientMappingAttributeName",
]);

const PROJECT = ["name", "roleAssertion", "roleCheck"] as const satisfies readonly (keyof ProjectSpec)[];
const ROLE = ["key", "displayName", "group"] as const satisfies readonly (keyof RoleSpec)[];

const MEMBERSHIP_CONTEXTS = ["system", "instance", "org", "project_grant"] as const satisfies readonly MembershipContextType[];
const PROVIDER_AGGREGATES = ["smtp_provider", "sms_provider"] as const;
const WEBAUTHN_KINDS = ["passkey", "u2f"] as const;

/** Settings events carry the change itself ({ set, reset }): the kind's properties, none of them a secret. */
const settingsEntry = (kind: SettingsKind): [string, readonly string[]] => [
  `settings.${kind.name}.set`,
  ["reset", ...under("set", Object.keys(kind.properties))],
];

const SETTINGS_KINDS: SettingsKind[] = [
  BRANDING_SETTINGS,
  DOMAIN_SETTINGS,
  featureSettings(FEATURE_DEFAULTS),
  LANGUAGE_SETTINGS,
  LOGIN_SETTINGS,
  ...MESSAGE_KINDS.flatMap((kind) => SUPPORTED_LANGUAGES.map((language) => messageTextSettings(kind, language))),
];

const SHOWN_BY_TYPE: Record<string, readonly string[]> = {
  "app.added": ["projectId", "name", "clientId", ...APP_CONFIG],
  "app.changed": ["name", ...APP_CONFIG, "secretChanged"],
  "app.deactivated": [],
  "app.reactivated": [],
  "app.removed": ["name"],
  "app.secret.regenerated": [],
  "app.key.added": ["appId", "type", "expiresAt"],
  "app.key.removed": ["appId"],

  "execution.set": ["targets", "includes"],
  "execution.removed": [],

  "idp.added": ["type", "name", "statePolicy", ...IDP_OPTIONS, ...IDP_CONFIG],
  "idp.changed": ["name", "statePolicy", ...IDP_OPTIONS, ...IDP_CONFIG, "clientSecretChanged"],
  "idp.policy.set": ["orgId", "policy"],
  "idp.removed": ["name"],

  "idp_intent.started": ["idpId", "orgId"],
  "idp_intent.succeeded": ["externalUserId"],
  "idp_intent.failed": ["error"],
  "idp_intent.consumed": ["sessionId"],

  "instance.added": ["name", ...PASSWORD_POLICY],
  "instance.changed": ["name", ...PASSWORD_POLICY, "defaultLanguage"],
  "instance.removed": ["name"],
  "instance.blocked": [],
  "instance.unblocked": [],
  "instance.audit_log_retention.set": ["ms"],
  "instance.default.org.set": ["orgId"],
  "instance.domain.added": ["domain", "primary"],
  "instance.domain.primary.set": ["domain"],
  "instance.domain.removed": ["domain"],

  ...Object.fromEntries(
    MEMBERSHIP_CONTEXTS.flatMap((context) => [
      [`${context}.member.added`, ["userId", "contextId", "roles"]],
      [`${context}.member.changed`, ["userId", "roles"]],
      [`${context}.member.removed`, ["userId"]],
    ]),
  ),

  "org.added": ["name"],
  "org.changed": ["name"],
  "org.deactivated": [],
  "org.reactivated": [],
  "org.removed": ["name"],
  "org.domain.added": ["domain", "generated", "verified"],
  "org.domain.primary.set": ["domain"],
  "org.domain.removed": ["domain"],
  "org.domain.validation.generated": ["domain", "type"],
  "org.domain.verified": ["domain", "type"],

  "project.added": ["orgId", ...PROJECT],
  "project.changed": PROJECT,
  "project.deactivated": [],
  "project.reactivated": [],
  "project.removed": ["name"],
  "project.role.added": ROLE,
  "project.role.changed": ROLE,
  "project.role.removed": ["key"],
  "user_schema.added": ["type", "schema", "possibleAuthenticators"],
  "user_schema.changed": ["type", "schema", "possibleAuthenticators", "revision"],
  "user_schema.activated": [],
  "user_schema.deactivated": [],
  "user_schema.removed": ["type"],
  "project.grant.added": ["projectId", "grantedOrgId", "roleKeys"],
  "project.grant.changed": ["roleKeys"],
  "project.grant.cascade.changed": ["roleKeys"],
  "project.grant.deactivated": [],
  "project.grant.reactivated": [],
  "project.grant.removed": ["projectId", "grantedOrgId"],

  ...Object.fromEntries(
    PROVIDER_AGGREGATES.flatMap((aggregate) => [
      [`${aggregate}.added`, ["description", "kind", ...under("config", PROVIDER_SETTINGS), "secretSet"]],
      [`${aggregate}.changed`, ["description", "kind", ...under("config", PROVIDER_SETTINGS), "secretChanged"]],
      [`${aggregate}.removed`, ["description"]],
      [`${aggregate}.activated`, []],
      // When another provider of the family was activated in its place.
      [`${aggregate}.deactivated`, ["replacedBy"]],
      [`${aggregate}.signing_key.regenerated`, []],
    ]),
  ),

  "session.added": ["fingerprintId"],
  "session.user.checked": ["userId"],
  "session.password.checked": [],
  "session.totp.checked": [],
  "session.otp_email.checked": [],
  "session.otp_sms.checked": [],
  "session.recovery_code.checked": [],
  "session.web_auth_n.checked": ["userVerified"],
  "session.idp_intent.checked": ["idpId", "intentId"],
  "session.otp_email.challenged": ["returned"],
  "session.otp_sms.challenged": ["returned"],
  "session.metadata.set": ["keys"],
  "session.lifetime.set": ["expiresAt"],
  "session.token.renewed": [],
  "session.terminated": [],

  ...Object.fromEntries(SETTINGS_KINDS.map(settingsEntry)),

  // Written by the sign-in events of issue 40 (the pages, sessions and token endpoints).
  "signin.succeeded": ["userId", "orgId", "method", "channel", "clientId"],
  "signin.failed": ["userId", "orgId", "method", "channel", "reason", "clientId"],
  "signin.suppressed": ["userId", "address", "count", "reasons", "from", "to"],

  "signing_key.added": ["kid", "algorithm", "activatesAt"],
  "signing_key.retiring": ["kid", "at"],
  "signing_key.removed": ["kid"],

  "target.added": TARGET,
  "target.changed": TARGET,
  "target.removed": ["name"],
  "target.signing_key.regenerated": [],

  "user.human.added": ["orgId", "username", ...under("profile", PROFILE), "email.address", "email.verified", "phone.number", "phone.verified", "hasPassword"],
  "user.machine.added": ["orgId", "username", "name", "description", "accessTokenType"],
  // A schema user's data is whatever its schema holds, private fields too: the log names the change, not the values.
  "user.schema.added": ["orgId", "username", "schemaId", "revision"],
  "user.data.changed": ["schemaId", "revision"],
  "user.changed": USER_COLUMNS,
  "user.locked": [],
  "user.unlocked": [],
  "user.deactivated": [],
  "user.reactivated": [],
  "user.removed": ["username"],
  "user.password.changed": ["changeRequired"],
  "user.password.code.added": ["sentTo"],
  "user.invite.code.added": ["sentTo"],
  "user.email.code.added": ["sentTo"],
  "user.email.verified": ["by"],
  "user.phone.code.added": ["sentTo"],
  "user.phone.verified": [],
  "user.secret.set": [],
  "user.secret.removed": [],
  "user.pat.added": ["userId", "expiresAt"],
  "user.pat.removed": ["userId"],
  "user.key.added": ["userId", "type", "expiresAt"],
  "user.key.removed": ["userId"],
  "user.metadata.set": ["key"],
  "user.metadata.removed": ["key"],
  "user.idp.link.added": ["idpId", "externalUserId", "externalUsername"],
  "user.idp.link.removed": ["idpId", "externalUserId"],
  "user.grant.added": ["projectId", "userId", "roleKeys", "projectGrantId"],
  "user.grant.changed": ["roleKeys"],
  "user.grant.cascade.changed": ["roleKeys"],
  "user.grant.removed": [],
  "user.totp.added": [],
  "user.totp.verified": [],
  "user.totp.removed": [],
  "user.otp_email.added": [],
  "user.otp_email.removed": [],
  "user.otp_sms.added": [],
  "user.otp_sms.removed": [],
  "user.recovery_codes.generated": ["count"],
  "user.recovery_codes.removed": [],
  "user.recovery_code.used": [],
  "user.mfa_init.skipped": [],
  "user.passkey_prompt.skipped": [],
  ...Object.fromEntries(
    WEBAUTHN_KINDS.flatMap((kind) => [
      [`user.${kind}.added`, ["id", "rpId"]],
      [`user.${kind}.verified`, ["id", "name"]],
      [`user.${kind}.removed`, ["id"]],
      [`user.${kind}.clone_suspected`, ["id"]],
    ]),
  ),
};

export const SHOWN_PATHS: ReadonlyMap<string, readonly string[]> = new Map(Object.entries(SHOWN_BY_TYPE));
