import type { Db } from "../../../store/db.js";
import type { EmailMessage, SmsMessage } from "../message.js";
import type { MessageKind } from "../../../domain/notification/kinds.js";
import { expiresIn, messageFor, messageLanguage } from "../texts/index.js";
import type { InstanceLinks } from "./links.js";
import type { ClaimedNotification } from "./queue.js";
import type { SealedContent } from "../../../domain/notification/record.js";

/** The message in its channel's form (the kind decides the channel), and the language it was written in. */
export type Rendered = { language: string } & ({ channel: "email"; email: EmailMessage } | { channel: "sms"; sms: SmsMessage });

/**
 * A waiting message as it goes out now: in the user's language (preferred, else the
 * organization's, else the instance's), with the texts in force for the organization, the
 * user's current display name and organization name, and the sealed code and link.
 * Undefined when the user is gone.
 */
export async function renderFor(
  db: Db,
  links: InstanceLinks,
  row: ClaimedNotification,
  kind: MessageKind,
  content: SealedContent,
): Promise<Rendered | undefined> {
  const user = await db
    .selectFrom("users as u")
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "u.instance_id").onRef("o.id", "=", "u.org_id"))
    .select(["u.name", "u.given_name", "u.family_name", "u.username", "u.preferred_language", "o.name as org_name"])
    .where("u.instance_id", "=", row.instance_id)
    .where("u.id", "=", row.user_id)
    .executeTakeFirst();
  if (!user) return undefined;
  const language = await messageLanguage(db, { instanceId: row.instance_id, orgId: row.org_id, preferredLanguage: user.preferred_language ?? undefined });
  const displayName = user.name || [user.given_name, user.family_name].filter(Boolean).join(" ") || user.username;
  const message = await messageFor(db, {
    instanceId: row.instance_id,
    orgId: row.org_id,
    kind,
    language,
    data: {
      DisplayName: displayName,
      OrgName: user.org_name,
      ExpiresIn: expiresIn(language, content.expiresInS),
      ...(content.code !== undefined && { Code: content.code }),
      ...(content.path !== undefined && { URL: `${await links.baseUrl(db, row.instance_id)}${content.path}` }),
    },
  });
  return message.channel === "email"
    ? { language, channel: "email", email: { to: row.recipient, subject: message.subject, text: message.text, html: message.html } }
    : { language, channel: "sms", sms: { to: row.recipient, text: message.sms } };
}
