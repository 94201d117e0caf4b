import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { PendingWebAuthn } from "../../../domain/user-webauthn/sign-in.js";
import type { WebAuthnKind } from "../../../domain/user-webauthn/factor.js";
import type { LoginContext, SignInStep } from "./context.js";
import { putRecord, takeRecord } from "../../adapters/login-records.js";

/**
 * What the pages' WebAuthn steps keep on the server between showing a challenge and its
 * answer, as the session API keeps a session's on its row: in records.ts, under the
 * interaction's uid and the step, so that the challenge of one interaction means nothing in
 * another. A page shown again replaces its step's challenge; an answer takes it (rightly or
 * not: a replayed answer finds none), and an unanswered one expires with the check's lifetime.
 */

const MODEL = "LoginWebAuthnChallenge";
/** The check refuses older answers anyway (user-webauthn/sign-in.ts); the record need not outlive it. */
const TTL_S = 5 * 60;

/** A sign-in's challenge (the first page's passkey; the second factor, for `userId`). */
interface AssertionRecord {
  pending: PendingWebAuthn;
  userId?: string;
}

/** A registration started on the pages: its pending credential, and why it was offered. */
export interface RegistrationRecord {
  userId: string;
  kind: WebAuthnKind;
  keyId: string;
  /** The login settings force a second factor and this is the person's set-up of one (mfa-setup.ts); else the passkey offer after a sign-in. */
  forced: boolean;
}

interface Records {
  signin: AssertionRecord;
  mfa: AssertionRecord;
  register: RegistrationRecord;
}

export function keepChallenge<K extends keyof Records>(s: Pick<SignInStep, "c" | "details">, step: K, record: Records[K]): Promise<void> {
  return putRecord(s.c.db, s.c.instanceId, MODEL, `${s.details.uid} ${step}`, record, TTL_S);
}

export function takeChallenge<K extends keyof Records>(s: Pick<SignInStep, "c" | "details">, step: K): Promise<Records[K] | undefined> {
  return takeRecord<Records[K]>(s.c.db, s.c.instanceId, MODEL, `${s.details.uid} ${step}`);
}

/** The relying party of the pages: the host they are served on (a domain of the instance: it resolved the instance). */
export const relyingPartyOf = (c: LoginContext): string => new URL(c.provider.issuer).hostname;

/** The authenticator's answer a form carries in `credential` (JSON, as the browser library makes it), when it is an object. */
export function answerOf<T extends AuthenticationResponseJSON | RegistrationResponseJSON>(form: Record<string, string>): T | undefined {
  try {
    const answer: unknown = JSON.parse(form.credential ?? "");
    return typeof answer === "object" && answer !== null && !Array.isArray(answer) ? (answer as T) : undefined;
  } catch {
    return undefined;
  }
}
