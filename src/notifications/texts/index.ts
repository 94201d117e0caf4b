/**
 * The texts of messages (section 2 of issue 19): default texts per kind and language,
 * overrides per context (PlatformMessageTextSettings), rendering, and the language a
 * message is written in. What the outbox uses.
 */
export { DEFAULT_TEXTS } from "./defaults.js";
export { expiresIn } from "./expires-in.js";
export { KINDS, type KindRules, type Placeholder } from "./kinds.js";
export { messageFor, messageLanguage } from "./message-for.js";
export { renderMessage, type MessageTemplate, type RenderedEmail, type RenderedMessage, type RenderedSms } from "./render.js";
