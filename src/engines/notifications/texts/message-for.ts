import { chooseLanguage, type SupportedLanguage } from "../../../domain/settings/language.js";
import { resolveSettings } from "../../../domain/settings/rows.js";
import type { Db, Tx } from "../../../store/db.js";
import type { MessageData, MessageKind } from "../../../domain/notification/kinds.js";
import { renderMessage, type RenderedMessage } from "./render.js";
import { messageTextSettings } from "../../../domain/settings/message-text.js";

/**
 * A message to a user of an organization, in its texts: the organization's own for the
 * kind and language, else its instance's, else the system's, else the defaults.
 */
export async function messageFor(
  db: Db | Tx,
  m: { instanceId: string; orgId: string; kind: MessageKind; language: SupportedLanguage; data: MessageData },
): Promise<RenderedMessage> {
  const { resolved } = await resolveSettings(db, messageTextSettings(m.kind, m.language), { type: "org", instanceId: m.instanceId, orgId: m.orgId });
  return renderMessage(m.kind, m.language, { subject: resolved.subject?.value as string | undefined, body: resolved.body!.value as string }, m.data);
}

/**
 * The language of a message to a user of an organization: the user's preferred language
 * ("de-CH" counts as "de") when it is supported and the organization allows it, else the
 * organization's default language, which is its instance's unless it sets its own.
 */
export function messageLanguage(db: Db | Tx, m: { instanceId: string; orgId: string; preferredLanguage?: string }): Promise<SupportedLanguage> {
  return chooseLanguage(db, m, m.preferredLanguage ? [m.preferredLanguage] : []);
}
