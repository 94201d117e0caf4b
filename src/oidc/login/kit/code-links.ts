import { LOGIN_PATH } from "./paths.js";

/**
 * The pages messages link to, outside any interaction: the code is the proof, so they need
 * no session. Each link carries the user and the code in its query; the message puts the
 * instance's address before it (notifications/outbox/links.ts).
 */
export const VERIFY_EMAIL_PATH = `${LOGIN_PATH}/email/verify`;
export const RESET_PASSWORD_PATH = `${LOGIN_PATH}/password/reset`;
export const ACCEPT_INVITE_PATH = `${LOGIN_PATH}/invite`;

const link = (path: string) => (userId: string, code: string) => `${path}?${new URLSearchParams({ user: userId, code })}`;

export const CODE_PAGE_PATHS = {
  verifyEmail: link(VERIFY_EMAIL_PATH),
  resetPassword: link(RESET_PASSWORD_PATH),
  acceptInvite: link(ACCEPT_INVITE_PATH),
};

/**
 * Where a reset or invitation page leads once the password is set (`returnTo` in its link):
 * a page of the administration console (server/console-files.ts) on this same origin, and
 * nothing else, so that a link cannot send a person anywhere after they chose a password.
 */
export function onwardPath(value: string | null | undefined): string | undefined {
  return value && value.length <= 500 && /^\/ui\/console\/(?![/\\])[\w\-.~/?=&%]*$/.test(value) && !value.includes("//") && !value.includes("..")
    ? value
    : undefined;
}
