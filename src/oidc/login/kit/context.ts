import type Provider from "oidc-provider";
import type { SignInRecorder } from "../../../domain/audit/sign-ins.js";
import type { PasswordHasher } from "../../../crypto/passwords.js";
import type { SettingsKind } from "../../../domain/settings/kind.js";
import type { VerificationSettings } from "../../../domain/user/code-messages.js";
import type { NodeRequest, NodeResponse } from "../../../http/respond.js";
import type { Db, Tx } from "../../../store/db.js";
import type { WindowLimiter } from "../../../http/window-limiter.js";
import type { Look } from "../view/look.js";
import type { FormError } from "../view/render.js";
import type { Language, Texts } from "../view/texts/index.js";

/*
 * What every module of the login pages works with: the instance's login context and one
 * request's step. Types only, so that the pages, their prompts and the sign-in's end import
 * this rather than each other.
 */

export interface LoginContext {
  db: Db;
  transact: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;
  /**
   * Password attempts per address and per login name (rate-limit.ts); the login settings'
   * kind with the configured lockout default (domain/settings/login.ts: the threshold is
   * the user's organization's); how long a sign-in counts for account selection (the
   * provider's session lifetime, known-accounts.ts). `maxPasswordAttempts` is only the
   * system default (PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS); the threshold in effect is the
   * user's organization's: `loginSettingsOf(db, instanceId, orgId, guards.loginSettings)`.
   */
  guards: { perIp: WindowLimiter; perLoginName: WindowLimiter; loginSettings: SettingsKind; sessionTtlS: number };
  /** After a lock committed: this process's caches of access go (others hear the NOTIFY). */
  accessChanged(): void;
  instanceId: string;
  provider: Provider;
  hasher: PasswordHasher;
  /** Signs the forms of an interaction (derived from the master key per instance). */
  csrfKey: string;
  maxBodyBytes: number;
  /** Codes by message: email verification, password reset, invitations (domain/user/code-messages.ts). */
  codes: VerificationSettings;
  /** A "Forgot password?" request is answered no sooner than this (PLATFORM_PASSWORD_RESET_ANSWER_TIME). */
  resetAnswerMs: number;
  /** The audit log's sign-in events: every check of a page records its attempt (page-origin.ts). */
  signIns: SignInRecorder;
}

export type Interaction = Awaited<ReturnType<Provider["interactionDetails"]>>;

/**
 * What a sign-in has proved so far: whose it is and how (`amr`: `pwd`, `fed`, or `user` and
 * `hwk`/`swk` for a passkey; then `otp`, `hwk`/`swk`).
 * The forms of the steps after the first factor carry it under a proof (progress.ts).
 */
export interface SignInProgress {
  userId: string;
  amr: string[];
  /**
   * An external account to link to the user once the sign-in ends with every factor it
   * needs (external/pending-link.ts): `<idp id>/<account id>` of the interaction's external login.
   */
  link?: string;
  /** When the first factor was checked (seconds since the epoch): the sign-in's `auth_time`. Set by sign-in.ts when absent. */
  first?: number;
  /** The passkey offer was answered in this request (key-setup.ts): not carried by forms, so never asked twice in one sign-in. */
  passkeyOffered?: boolean;
}

/**
 * A request to one of an interaction's pages after its cookie was checked: the steps after
 * the first factor need no more (the external login's pages have these too).
 */
export interface SignInStep {
  req: NodeRequest;
  res: NodeResponse;
  c: LoginContext;
  details: Interaction;
  /** `${LOGIN_PATH}/<uid>`: where the interaction's pages live. */
  base: string;
  csrf: string;
  lang: Language;
  t: Texts;
  /** Whose login it is (look.ts): show() frames every page with it. */
  look: Look;
  show(status: number, title: string, body: string): void;
}

/** One request to a step of the prompts (prompts.ts), with what pages.ts already worked out. */
export interface PromptStep extends SignInStep {
  step: string | undefined;
  /** The organization the scope restricts the login to, if any. */
  requestedOrg: string | undefined;
  askLoginName(status: number, loginName: string, error?: FormError): Promise<void>;
  /** The first factor passed, or a later step: on to what the login still needs (sign-in.ts). */
  proceed(progress: SignInProgress): Promise<void>;
}
