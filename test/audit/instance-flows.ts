import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PlatformUserSchemas } from "../../gen/platform/resources/user_schema/v3alpha/user_schema_service_pb.js";
import { PlatformBrandingSettings } from "../../gen/platform/settings/branding/v3alpha/branding_service_pb.js";
import { PlatformDomainSettings } from "../../gen/platform/settings/domain/v3alpha/domain_service_pb.js";
import { PlatformFeatureSettings } from "../../gen/platform/settings/feature/v3alpha/feature_service_pb.js";
import { PlatformLanguageSettings } from "../../gen/platform/settings/language/v3alpha/language_service_pb.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { PlatformMessageTextSettings } from "../../gen/platform/settings/message_text/v3alpha/message_text_service_pb.js";
import { DAY_MS, fromNow, humanUser, uniqueName } from "../users/helpers.js";
import { calls, type Flow } from "./flow.js";
import { newPassword } from "./user-flows.js";

/** A 1×1 PNG, the smallest logo there is. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/**
 * An instance created with a person as its administrator, a language and a password policy;
 * patched, its domains changed, blocked and unblocked, its audit log retention set, its
 * signing keys rotated; then deleted. And the keys of the test's own instance rotated.
 */
/**
 * A user schema through its life: its events carry the JSON Schema, which names no secret;
 * a user of it is created and its data changed (the log shows neither data).
 */
export async function userSchemaFlows(f: Flow): Promise<void> {
  const schemas = calls(f, PlatformUserSchemas);
  const users = calls(f, PlatformUsers);
  const schema = { type: "object", properties: { name: { type: "string" } } };
  const id = (
    await schemas("CreateUserSchema", { userSchema: { type: uniqueName("audit-schema"), schema, possibleAuthenticators: ["AUTHENTICATOR_TYPE_USERNAME"] } })
  ).details.id as string;
  const user = (await users("CreateUser", { user: { username: uniqueName("audit-schema-user"), schema: { schemaId: id, data: { name: "Private Name" } } } }))
    .details.id as string;
  await users("PatchUser", { id: user, user: { schema: { data: { name: "Another Private Name" } } } });
  await users("DeleteUser", { id: user });
  await schemas("PatchUserSchema", { id, userSchema: { schema: { ...schema, required: ["name"] } } });
  await schemas("DeactivateUserSchema", { id });
  await schemas("ActivateUserSchema", { id });
  await schemas("DeleteUserSchema", { id });
}

export async function instanceFlows(f: Flow): Promise<void> {
  const instances = calls(f, PlatformInstances);
  const [domain, added] = [`${uniqueName("inst")}.audit.example`, `${uniqueName("more")}.audit.example`];
  const admin = humanUser(uniqueName("first"), { password: newPassword(f, "instance") });
  const policy = { minLength: 10, requireUppercase: true, requireLowercase: true, requireNumber: true, requireSymbol: false };
  const made = await instances("CreateInstance", {
    instance: {
      name: "Audit instance",
      domains: [domain],
      firstOrgName: "First",
      admin: { user: admin, patExpirationDate: fromNow(DAY_MS) },
      defaultLanguage: "de",
      passwordPolicy: policy,
    },
  });
  const id = made.details.id as string;
  await instances("PatchInstance", { id, instance: { name: "Audit instance 2", defaultLanguage: "fr", passwordPolicy: { ...policy, minLength: 12 } } });
  await instances("AddInstanceDomain", { id, domain: { domain: added } });
  await instances("SetPrimaryInstanceDomain", { id, domain: added });
  await instances("RemoveInstanceDomain", { id, domain });
  await instances("Limit", { id, limits: { block: true, auditLogRetention: "86400s" } });
  await instances("Limit", { id, limits: { block: false } });
  // The first rotation may create the instance's first key, the second retires it.
  for (let i = 0; i < 2; i++) await instances("RotateKeys", { id: f.server.instanceId });
  await instances("DeleteInstance", { id });
}

/** Every kind of settings set in the default organization (or, where only there, the instance), an image uploaded and removed. */
export async function settingsFlows(f: Flow): Promise<void> {
  const org = { orgId: f.server.defaultOrgId };
  const instance = { instanceId: f.server.instanceId };
  await f.ok(PlatformLoginSettings, "SetLoginSettings", { settings: { maxPasswordAttempts: { set: 5 }, forceMfa: { set: false } }, ctx: org });
  await f.ok(PlatformDomainSettings, "SetDomainSettings", { settings: { validateOrgDomains: { set: false } }, ctx: instance });
  await f.ok(PlatformLanguageSettings, "SetLanguages", { settings: { defaultLanguage: { key: "de" } }, ctx: org });
  await f.ok(PlatformFeatureSettings, "SetFeatures", { settings: { tokenExchange: { set: true } }, ctx: org });
  await f.ok(PlatformBrandingSettings, "SetBrandingSettings", { settings: { primaryColor: { set: "#123456" } }, ctx: org });
  await f.ok(PlatformBrandingSettings, "SetBrandingImage", { image: "logo", content: { contentType: "image/png", data: PNG }, ctx: org });
  await f.ok(PlatformBrandingSettings, "RemoveBrandingImage", { image: "logo", ctx: org });
  await f.ok(PlatformMessageTextSettings, "SetMessageText", {
    kind: "password_reset",
    language: "de",
    settings: { subject: { set: "Neues Passwort für {{.OrgName}}" } },
    ctx: org,
  });
}
