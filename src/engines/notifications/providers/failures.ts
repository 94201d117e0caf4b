import type { NodemailerError } from "nodemailer";
import { OutboundError } from "../../../http/outbound.js";
import { SendFailed } from "../message.js";

/** Longest part of a provider's answer kept in a failure: enough for its words, not its whole page. */
const MAX_WORDS = 500;

/**
 * An SMTP failure in the server's own words. Permanent when the server refused the message or
 * a recipient for good (a 5xx reply to RCPT TO or DATA); anything else may pass later: a
 * connection, TLS or authentication failure, a timeout, a 4xx reply, or a 5xx to AUTH or MAIL
 * FROM, which a corrected provider no longer gets.
 */
export function smtpFailure(error: unknown): SendFailed {
  if (error instanceof SendFailed) return error;
  const e = error as NodemailerError;
  const words = (e.response ?? e.message ?? String(error)).slice(0, MAX_WORDS);
  const command = e.command?.split(" ").slice(0, 2).join(" ");
  const permanent = e.permanent === true && (command === "RCPT TO" || command === "DATA");
  const what = e.responseCode ? `the SMTP server answered ${command ? `${command} with ` : ""}${words}` : `SMTP ${e.code ?? "error"}: ${words}`;
  return new SendFailed(what, !permanent);
}

/** An HTTP provider's answer that is not a 2xx: 408, 429 and 5xx may pass later. */
export function httpFailure(who: string, status: number, words: string): SendFailed {
  const retryable = status === 408 || status === 429 || status >= 500;
  const said = words.trim().slice(0, MAX_WORDS);
  return new SendFailed(`${who} answered HTTP ${status}${said ? `: ${said}` : ""}`, retryable);
}

/** The outbound client could not get an answer: refused destinations stay refused, the rest may pass. */
export function outboundFailure(who: string, error: unknown): SendFailed {
  if (error instanceof OutboundError)
    return new SendFailed(`${who} could not be called (${error.failure}): ${error.message}`, error.failure !== "refused" && error.failure !== "invalid_url");
  return new SendFailed(`${who} could not be called: ${(error as Error).message ?? String(error)}`, true);
}
