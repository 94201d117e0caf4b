import { describe, expect, it } from "vitest";
import { REDACTED_EVENT_TYPES, redactedPayload, shownPaths } from "../../src/domain/audit/redaction.js";
import { EVENT_TYPES } from "../../src/domain/action/execution/events.js";
import { MESSAGE_TEXT_EVENT_TYPES } from "../../src/domain/settings/message-text.js";
import { namesSecret } from "../audit/secret-names.js";

/**
 * The types the commands write, found by reading them (every appendEvents, queueEvents and
 * appendToEach, templates such as `user.${kind}.added` expanded), and the sign-in events
 * issue 40 announces. The message texts' types come from their own list: one per kind and
 * language.
 */
const WRITTEN = [
  ...["app.added", "app.changed", "app.deactivated", "app.reactivated", "app.removed", "app.secret.regenerated", "app.key.added", "app.key.removed"],
  ...["execution.set", "execution.removed"],
  ...["idp.added", "idp.changed", "idp.policy.set", "idp.removed"],
  ...["idp_intent.started", "idp_intent.succeeded", "idp_intent.failed", "idp_intent.consumed"],
  ...[
    "instance.added",
    "instance.changed",
    "instance.removed",
    "instance.blocked",
    "instance.unblocked",
    "instance.audit_log_retention.set",
    "instance.default.org.set",
  ],
  ...["instance.domain.added", "instance.domain.primary.set", "instance.domain.removed"],
  ...["system", "instance", "org", "project_grant"].flatMap((c) => [`${c}.member.added`, `${c}.member.changed`, `${c}.member.removed`]),
  ...["org.added", "org.changed", "org.deactivated", "org.reactivated", "org.removed"],
  ...["org.domain.added", "org.domain.primary.set", "org.domain.removed", "org.domain.validation.generated", "org.domain.verified"],
  ...[
    "project.added",
    "project.changed",
    "project.deactivated",
    "project.reactivated",
    "project.removed",
    "project.role.added",
    "project.role.changed",
    "project.role.removed",
    "project.grant.added",
    "project.grant.changed",
    "project.grant.cascade.changed",
    "project.grant.deactivated",
    "project.grant.reactivated",
    "project.grant.removed",
    "user_schema.added",
    "user_schema.changed",
    "user_schema.activated",
    "user_schema.deactivated",
    "user_schema.removed",
  ],
  ...["smtp_provider", "sms_provider"].flatMap((p) =>
    ["added", "changed", "removed", "activated", "deactivated", "signing_key.regenerated"].map((e) => `${p}.${e}`),
  ),
  ...["session.added", "session.user.checked", "session.password.checked", "session.web_auth_n.checked", "session.idp_intent.checked"],
  ...["totp", "otp_email", "otp_sms", "recovery_code"].map((check) => `session.${check}.checked`),
  ...[
    "session.otp_email.challenged",
    "session.otp_sms.challenged",
    "session.metadata.set",
    "session.lifetime.set",
    "session.token.renewed",
    "session.terminated",
  ],
  ...["branding", "domain", "feature", "language", "login"].map((kind) => `settings.${kind}.set`),
  ...MESSAGE_TEXT_EVENT_TYPES,
  ...["signin.succeeded", "signin.failed", "signin.suppressed"],
  ...["signing_key.added", "signing_key.retiring", "signing_key.removed"],
  ...["target.added", "target.changed", "target.removed", "target.signing_key.regenerated"],
  ...[
    "user.human.added",
    "user.machine.added",
    "user.schema.added",
    "user.data.changed",
    "user.changed",
    "user.locked",
    "user.unlocked",
    "user.deactivated",
    "user.reactivated",
    "user.removed",
  ],
  ...[
    "user.password.changed",
    "user.password.code.added",
    "user.invite.code.added",
    "user.email.code.added",
    "user.email.verified",
    "user.phone.code.added",
    "user.phone.verified",
  ],
  ...[
    "user.secret.set",
    "user.secret.removed",
    "user.pat.added",
    "user.pat.removed",
    "user.key.added",
    "user.key.removed",
    "user.metadata.set",
    "user.metadata.removed",
  ],
  ...["user.idp.link.added", "user.idp.link.removed", "user.grant.added", "user.grant.changed", "user.grant.cascade.changed", "user.grant.removed"],
  ...[
    "user.totp.added",
    "user.totp.verified",
    "user.totp.removed",
    "user.otp_email.added",
    "user.otp_email.removed",
    "user.otp_sms.added",
    "user.otp_sms.removed",
  ],
  ...["user.recovery_codes.generated", "user.recovery_codes.removed", "user.recovery_code.used"],
  ...["user.mfa_init.skipped", "user.passkey_prompt.skipped"],
  ...["passkey", "u2f"].flatMap((kind) => ["added", "verified", "removed", "clone_suspected"].map((e) => `user.${kind}.${e}`)),
];

/** What a decoy of a secret is worth: found in a redacted payload, it leaked. */
const LEAK = "LEAKED-SECRET";
const DECOYS = [
  "secret",
  "clientSecret",
  "password",
  "passwordHash",
  "token",
  "tokenHash",
  "code",
  "privateKey",
  "totpSecret",
  "recoveryCodes",
  "credential",
  "sealed_secret",
  "signingKey",
  "encrypted",
];

/**
 * A payload with every path the type shows (each value its own path) and decoys of secrets
 * beside them, at every level the paths go through.
 */
function payloadWithDecoys(paths: readonly string[]): Record<string, unknown> {
  const decoys = () => Object.fromEntries(DECOYS.map((name) => [name, LEAK]));
  const payload: Record<string, unknown> = decoys();
  for (const path of paths) {
    const names = path.split(".");
    let at = payload;
    for (const name of names.slice(0, -1)) at = (at[name] ??= decoys()) as Record<string, unknown>;
    at[names.at(-1)!] = path;
  }
  return payload;
}

describe("the redaction of event payloads", () => {
  it("declares exactly the types the service writes", () => {
    expect(REDACTED_EVENT_TYPES).toEqual([...new Set(WRITTEN)].sort());
    // The event executions' hand-kept list is a second reading of the commands.
    expect(EVENT_TYPES.filter((type) => !REDACTED_EVENT_TYPES.includes(type))).toEqual([]);
  });

  it("shows no property named like a secret, of any type, nor one inside such a property", () => {
    const secretNamed = REDACTED_EVENT_TYPES.flatMap((type) =>
      shownPaths(type)
        .filter((path) => path.split(".").some(namesSecret))
        .map((path) => `${type}: ${path}`),
    );
    expect(secretNamed).toEqual([]);
  });

  it.each(REDACTED_EVENT_TYPES)("%s shows what it declares and none of the secrets beside it", (type) => {
    const paths = shownPaths(type);
    const shown = redactedPayload(type, payloadWithDecoys(paths));
    expect(JSON.stringify(shown)).not.toContain(LEAK);
    const leaves = (value: unknown, prefix: string): string[] =>
      typeof value === "object" && value !== null
        ? Object.entries(value).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k))
        : [`${prefix}=${String(value)}`];
    expect(leaves(shown, "").sort()).toEqual(paths.map((path) => `${path}=${path}`).sort());
  });

  it("shows nothing of a type nobody declared, nor of a payload that is no object", () => {
    expect(redactedPayload("user.teleported", { userId: "u1", password: "x" })).toEqual({});
    for (const payload of [null, undefined, "user.removed", 7, ["username"]]) expect(redactedPayload("user.removed", payload)).toEqual({});
  });

  it("follows nested paths, leaving out the secret beside a shown setting and objects with nothing shown", () => {
    const payload = { description: "mail", kind: "smtp", config: { host: "smtp.example", port: 587, password: "hunter2" }, secret: "hunter2", secretSet: true };
    expect(redactedPayload("smtp_provider.added", payload)).toEqual({
      description: "mail",
      kind: "smtp",
      config: { host: "smtp.example", port: 587 },
      secretSet: true,
    });
    expect(redactedPayload("smtp_provider.added", { description: "mail", config: { password: "hunter2" } })).toEqual({ description: "mail" });
    // A nested path through something that is no object shows nothing of it.
    expect(redactedPayload("smtp_provider.added", { config: "host=smtp.example;password=hunter2" })).toEqual({});
  });

  it("shows a declared leaf whole, arrays included", () => {
    const app = {
      projectId: "p1",
      name: "web",
      clientId: "c1",
      type: "oidc",
      oidc: { redirectUris: ["https://app.example/cb"], authMethod: "basic", clientSecret: "s" },
    };
    expect(redactedPayload("app.added", app)).toEqual({
      projectId: "p1",
      name: "web",
      clientId: "c1",
      type: "oidc",
      oidc: { redirectUris: ["https://app.example/cb"], authMethod: "basic" },
    });
    expect(redactedPayload("execution.set", { targets: ["t1", "t2"], includes: [] })).toEqual({ targets: ["t1", "t2"], includes: [] });
  });
});
