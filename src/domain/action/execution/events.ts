import { MESSAGE_TEXT_EVENT_TYPES } from "../../settings/message-text.js";

/**
 * The event types appendEvents writes, as event conditions may name them
 * (ListAvailableExecutionEvents). Kept by hand next to the commands that write them;
 * test/actions/event-deliveries.test.ts checks the ones it sees against this list.
 */
export const EVENT_TYPES: readonly string[] = [
  "app.added",
  "app.changed",
  "app.deactivated",
  "app.key.added",
  "app.key.removed",
  "app.reactivated",
  "app.removed",
  "app.secret.regenerated",
  "execution.removed",
  "execution.set",
  "idp.added",
  "idp.changed",
  "idp.policy.set",
  "idp.removed",
  "instance.added",
  "instance.audit_log_retention.set",
  "instance.blocked",
  "instance.changed",
  "instance.default.org.set",
  "instance.domain.added",
  "instance.domain.primary.set",
  "instance.domain.removed",
  "instance.member.added",
  "instance.member.changed",
  "instance.member.removed",
  "instance.removed",
  "instance.unblocked",
  "org.added",
  "org.changed",
  "org.deactivated",
  "org.domain.added",
  "org.domain.primary.set",
  "org.domain.removed",
  "org.domain.validation.generated",
  "org.domain.verified",
  "org.member.added",
  "org.member.changed",
  "org.member.removed",
  "org.reactivated",
  "org.removed",
  "project.added",
  "project.changed",
  "project.deactivated",
  "project.grant.added",
  "project.grant.cascade.changed",
  "project.grant.changed",
  "project.grant.deactivated",
  "project.grant.reactivated",
  "project.grant.removed",
  "project.reactivated",
  "project.removed",
  "project.role.added",
  "project.role.changed",
  "project.role.removed",
  "project_grant.member.added",
  "project_grant.member.changed",
  "project_grant.member.removed",
  "settings.domain.set",
  "settings.feature.set",
  "settings.language.set",
  "settings.login.set",
  ...MESSAGE_TEXT_EVENT_TYPES,
  "signing_key.added",
  "signing_key.removed",
  "signing_key.retiring",
  "sms_provider.activated",
  "sms_provider.added",
  "sms_provider.changed",
  "sms_provider.deactivated",
  "sms_provider.removed",
  "sms_provider.signing_key.regenerated",
  "smtp_provider.activated",
  "smtp_provider.added",
  "smtp_provider.changed",
  "smtp_provider.deactivated",
  "smtp_provider.removed",
  "smtp_provider.signing_key.regenerated",
  "system.member.added",
  "system.member.changed",
  "system.member.removed",
  "target.added",
  "target.changed",
  "target.removed",
  "target.signing_key.regenerated",
  "user.changed",
  "user.data.changed",
  "user.deactivated",
  "user.email.code.added",
  "user.email.verified",
  "user.grant.added",
  "user.grant.cascade.changed",
  "user.grant.changed",
  "user.grant.removed",
  "user.human.added",
  "user.idp.link.added",
  "user.idp.link.removed",
  "user.invite.code.added",
  "user.key.added",
  "user.key.removed",
  "user.locked",
  "user.machine.added",
  "user.password.changed",
  "user.password.code.added",
  "user.pat.added",
  "user.pat.removed",
  "user.phone.code.added",
  "user.phone.verified",
  "user.reactivated",
  "user.removed",
  "user.schema.added",
  "user.secret.removed",
  "user.secret.set",
  "user.unlocked",
  "user_schema.activated",
  "user_schema.added",
  "user_schema.changed",
  "user_schema.deactivated",
  "user_schema.removed",
];

/** Every dotted prefix of a listed type (`user`, `user.grant`, …): what `event/<group>.*` may name. */
export function eventGroups(types: readonly string[] = EVENT_TYPES): string[] {
  const groups = new Set<string>();
  for (const type of types) {
    const parts = type.split(".");
    for (let i = 1; i < parts.length; i++) groups.add(parts.slice(0, i).join("."));
  }
  return [...groups].sort();
}

/**
 * The execution ids that may apply to an event, the most specific first: the type itself,
 * then its groups from the longest prefix to the shortest, then all events. A group matches
 * by dotted prefix only: `user.*` matches `user.human.added`, never `username.changed`.
 */
export function eventCandidates(eventType: string): string[] {
  const parts = eventType.split(".");
  const groups: string[] = [];
  for (let i = parts.length - 1; i >= 1; i--) groups.push(`event/${parts.slice(0, i).join(".")}.*`);
  return [`event/${eventType}`, ...groups, "event"];
}
