import type { Origin } from "../../store/editor.js";
import type { SignInRow } from "../../store/sign-in-log.js";
import type { Summary } from "./sign-in-bound.js";

/*
 * Sign-in events (docs/architecture.md, "Sign-in events"): what an attempt is, and the rows
 * of `events` it becomes. The channels record their attempts (the login pages, the session
 * API, the token endpoint); sign-in-log.ts bounds and writes them.
 */

/** Where the attempt was made: the login pages, the session API's checks, the token endpoint. */
type SignInChannel = "login" | "session" | "token";

/**
 * What the attempt was to prove:
 * - `login_name`: a login name alone (the pages' first page, a session's user check without a
 *   factor); only its failures are recorded, naming an account proves nothing
 * - `password`; `totp`, `otp_email`, `otp_sms`, `recovery_code`: the code of that factor
 * - `webauthn`: a security key or passkey answering for a user already named (a second factor)
 * - `passkey`: a passkey that names its user (a sign-in without a login name)
 * - `idp`: an external login (its end on the pages, a session's intent check)
 * - `client_secret`, `jwt_bearer`: a machine user at the token endpoint, by its secret
 *   (client_credentials) or by an assertion signed with its key (RFC 7523)
 */
export type SignInMethod =
  "login_name" | "password" | "totp" | "otp_email" | "otp_sms" | "recovery_code" | "webauthn" | "passkey" | "idp" | "client_secret" | "jwt_bearer";

/**
 * Why it failed: `unknown_name` (no such account, or none usable here; the name is never
 * recorded), `wrong_password`, `wrong_code` (a second factor's code, an intent's token),
 * `invalid_key` (a WebAuthn answer or an assertion that does not verify), `wrong_secret` (a
 * machine user's client secret), `locked`, `inactive` (the user or its organization),
 * `not_allowed` (the login settings do not let this user sign in this way).
 */
export type SignInReason = "unknown_name" | "wrong_password" | "wrong_code" | "invalid_key" | "wrong_secret" | "locked" | "inactive" | "not_allowed";

/** The account an attempt was for: only one that exists. */
export interface SignInUser {
  id: string;
  orgId: string;
}

/** A user of the store's rows as an attempt names it. */
export const rowUser = (row: { id: string; org_id: string }): SignInUser => ({ id: row.id, orgId: row.org_id });

/** Where an attempt was made: the instance, the channel, and where the request came from. */
interface SignInPlace {
  instanceId: string;
  channel: SignInChannel;
  origin: Origin;
}

/** What was checked and how it went: a success is always of an account. */
export type SignInCheck = { method: SignInMethod } & ({ outcome: "succeeded"; user: SignInUser } | { outcome: SignInReason; user?: SignInUser });

export type SignInAttempt = SignInPlace & SignInCheck;

/** Takes attempts without waiting for their rows, and never fails the sign-in that made one (sign-in-log.ts). */
export interface SignInRecorder {
  record(attempt: SignInAttempt): void;
}

/** Why a user that exists cannot sign in, if it cannot. */
export function stateRefusal(state: string): "locked" | "inactive" | undefined {
  return state === "active" ? undefined : state === "locked" ? "locked" : "inactive";
}

/** The creator of an attempt that named no account. */
const ANONYMOUS = "anonymous";

/** An attempt recorded one by one: `signin.succeeded` or `signin.failed`. */
export function attemptRow(a: SignInAttempt, at: Date): SignInRow {
  const { client, ip, userAgent } = a.origin;
  const how = { method: a.method, channel: a.channel };
  const payload =
    a.outcome === "succeeded"
      ? { userId: a.user.id, orgId: a.user.orgId, ...how, clientId: client ?? "" }
      : { ...(a.user && { userId: a.user.id, orgId: a.user.orgId }), ...how, reason: a.outcome, ...(client !== undefined && { clientId: client }) };
  return {
    instanceId: a.instanceId,
    aggregateId: a.user?.id ?? "",
    orgId: a.user?.orgId ?? "",
    type: a.outcome === "succeeded" ? "signin.succeeded" : "signin.failed",
    payload,
    creator: a.user?.id ?? ANONYMOUS,
    client: client ?? null,
    ip: ip ?? null,
    userAgent: userAgent ?? null,
    at,
  };
}

/** A key's attempts that were only counted: `signin.suppressed`, written when its window ended (`at`). */
export function summaryRow(s: Summary, at: Date): SignInRow {
  return {
    instanceId: s.instanceId,
    aggregateId: s.user?.id ?? "",
    orgId: s.user?.orgId ?? "",
    type: "signin.suppressed",
    payload: {
      ...(s.user && { userId: s.user.id }),
      ...(s.address !== undefined && { address: s.address }),
      count: s.count,
      reasons: s.reasons,
      from: s.from.toISOString(),
      to: s.to.toISOString(),
    },
    creator: s.user?.id ?? ANONYMOUS,
    client: null,
    ip: s.address ?? null,
    userAgent: null,
    at,
  };
}
