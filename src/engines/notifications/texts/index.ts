/**
 * Messages rendered in their language (section 2 of issue 19): the texts the settings
 * resolve (default texts and their rules live in domain/settings/message-text.ts and
 * domain/notification/), filled and put in the HTML frame. What the outbox uses.
 */
export { expiresIn } from "./expires-in.js";
export { messageFor, messageLanguage } from "./message-for.js";
export { renderMessage, type RenderedEmail, type RenderedSms } from "./render.js";
