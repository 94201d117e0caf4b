import { generateKeyPairSync } from "node:crypto";
import type { DescService, JsonObject } from "@bufbuild/protobuf";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PlatformIdentityProviders } from "../../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { smtpSettings, twilioSettings } from "../notification-providers/requests.js";
import { uniqueName } from "../users/helpers.js";
import { calls, type Flow } from "./flow.js";
import { startSamlIdp } from "../support/saml-idp.js";

/** A target with its signing key regenerated, used by an execution that loses it when it is deleted. */
export async function actionFlows(f: Flow): Promise<void> {
  const actions = calls(f, PlatformActions);
  const target = (
    await actions("CreateTarget", { target: { name: uniqueName("audit-hook"), restWebhook: { url: "https://hooks.example/audit" }, timeout: "5s" } })
  ).details.id as string;
  await actions("PatchTarget", { id: target, target: { timeout: "4s", regenerateSigningKey: true } });
  const other = (
    await actions("CreateTarget", { target: { name: uniqueName("audit-other"), restWebhook: { url: "https://hooks.example/other" }, isAsync: true } })
  ).details.id as string;
  const condition = { event: { event: "user.human.added" } };
  await actions("PutExecution", { execution: { condition, targets: [target, other] } });
  await actions("DeleteTarget", { id: target });
  await actions("DeleteExecution", { id: "event/user.human.added" });
  await actions("DeleteTarget", { id: other });
}

/**
 * Per family, a provider with a password or token, changed, activated, then replaced by an
 * `http` provider with a signing key (regenerated); both deactivated and deleted.
 */
export async function providerFlows(f: Flow): Promise<void> {
  const secret = (label: string) => {
    const value = `${label}-${uniqueName("secret")}`;
    f.keep(value);
    return value;
  };
  const families: [DescService, string, string, JsonObject, JsonObject][] = [
    [
      PlatformSMTPProviders,
      "SMTP",
      "smtp",
      smtpSettings(2525, { password: secret("smtp-password") }),
      { password: secret("smtp-password-2"), senderName: "Audit" },
    ],
    [
      PlatformSMSProviders,
      "SMS",
      "twilio",
      twilioSettings({ token: secret("twilio-token"), senderNumber: "+15005550006" }),
      { token: secret("twilio-token-2") },
    ],
  ];
  for (const [service, name, kind, settings, patch] of families) {
    const call = (method: string, request: JsonObject) => f.ok(service, `${method}${name}Provider`, request);
    const first = (await call("Create", { provider: { description: `Audit ${kind}`, [kind]: settings } })).details.id as string;
    await call("Patch", { id: first, provider: { description: `Audit ${kind} 2`, [kind]: patch } });
    await call("Activate", { id: first });
    const hook = (await call("Create", { provider: { description: "Audit hook", http: { url: "https://hooks.example/messages" } } })).details.id as string;
    await call("Patch", { id: hook, provider: { regenerateSigningKey: true } });
    await call("Activate", { id: hook });
    for (const method of ["Deactivate", "Delete"]) await call(method, { id: hook });
    await call("Delete", { id: first });
  }
}

/**
 * An identity provider of each type with its client secret (LDAP: bind password): changed with a new secret,
 * deactivated for the default organization, and deleted.
 */
export async function idpFlows(f: Flow): Promise<void> {
  const idps = calls(f, PlatformIdentityProviders);
  const types: [string, JsonObject][] = [
    ["GitLab", {}],
    ["GitLabSelfHosted", { issuer: "https://gitlab.audit.example" }],
    ["OIDC", { issuer: "https://issuer.audit.example", isIdTokenMapping: true }],
    [
      "OAuth",
      {
        authorizationEndpoint: "https://oauth.audit.example/authorize",
        tokenEndpoint: "https://oauth.audit.example/token",
        userEndpoint: "https://oauth.audit.example/user",
        idAttribute: "sub",
      },
    ],
    ["GitHub", {}],
    ["Google", {}],
    ["AzureAD", { tenant: { tenantId: "contoso.onmicrosoft.com" }, isEmailVerified: true }],
    ["Apple", { teamId: "AUDITTEAM1", keyId: "AUDITKEY01" }],
  ];
  // Apple's secret is its private key: a PEM, kept (remembered) by its base64 lines.
  const appleKey = () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  for (const [type, extra] of types) {
    const field = type === "Apple" ? "privateKey" : "clientSecret";
    const clientSecret = type === "Apple" ? appleKey() : `${type}-client-secret-${uniqueName("s")}`;
    const newSecret = type === "Apple" ? appleKey() : `${type}-new-secret-${uniqueName("s")}`;
    f.keep(...[clientSecret, newSecret].flatMap((s) => (type === "Apple" ? s.split("\n").filter((line) => line && !line.startsWith("-----")) : [s])));
    const options = { isAutoCreation: true, autoLinking: "AUTO_LINKING_OPTION_EMAIL" };
    const id = (
      await idps(`Create${type}IDP`, {
        idp: {
          idp: { name: uniqueName(`Audit ${type}`), options },
          config: { clientId: `${type}-client`, [field]: clientSecret, scopes: ["openid"], ...extra },
        },
      })
    ).details.id as string;
    await idps(`Patch${type}IDP`, {
      id,
      idp: { idp: { name: uniqueName(`Audit ${type} 2`) }, config: { [field]: newSecret, scopes: ["openid", "email"] } },
    });
    await idps(`Patch${type}IDP`, { id, ctx: { orgId: f.server.defaultOrgId }, idp: { idp: { statePolicy: "STATE_POLICY_DEACTIVATE" } } });
    await idps("DeleteIDP", { id });
  }
  // LDAP: its secret is the bind password.
  const bindPassword = `ldap-bind-password-${uniqueName("s")}`;
  const newBindPassword = `ldap-new-bind-password-${uniqueName("s")}`;
  f.keep(bindPassword, newBindPassword);
  const config = {
    servers: ["ldaps://ldap.audit.example"],
    baseDn: "dc=audit,dc=example",
    bindDn: "cn=reader,dc=audit,dc=example",
    bindPassword,
    userObjectClasses: ["inetOrgPerson"],
    userFilters: ["uid"],
    attributes: { idAttribute: "uid", emailAttribute: "mail" },
  };
  const id = (await idps("CreateLDAPIDP", { idp: { idp: { name: uniqueName("Audit LDAP") }, config } })).details.id as string;
  await idps("PatchLDAPIDP", { id, idp: { config: { servers: ["ldaps://ldap2.audit.example"], bindPassword: newBindPassword, timeout: "3s" } } });
  await idps("PatchLDAPIDP", { id, ctx: { orgId: f.server.defaultOrgId }, idp: { idp: { statePolicy: "STATE_POLICY_DEACTIVATE" } } });
  await idps("DeleteIDP", { id });
  // SAML: no secret is given (the SP key pair is made by the service).
  const upstream = await startSamlIdp();
  try {
    const saml = { metadataXml: upstream.metadataXml(), binding: "SAML_BINDING_REDIRECT", nameIdFormat: "SAML_NAME_ID_FORMAT_EMAIL_ADDRESS" };
    const samlId = (await idps("CreateSAMLIDP", { idp: { idp: { name: uniqueName("Audit SAML") }, config: saml } })).details.id as string;
    await idps("PatchSAMLIDP", {
      id: samlId,
      idp: { config: { withSignedRequest: true, nameIdFormat: "SAML_NAME_ID_FORMAT_TRANSIENT", transientMappingAttributeName: "employeeNumber" } },
    });
    await idps("DeleteIDP", { id: samlId });
  } finally {
    await upstream.close();
  }
}
