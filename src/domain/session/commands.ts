import type { PasswordHasher } from "../../crypto/passwords.js";
import { hashToken, newOpaqueToken } from "../../crypto/tokens.js";
import type { WindowLimiter } from "../../http/window-limiter.js";
import { appendEvents, queueEvents } from "../../store/append.js";
import type { Db, Tx } from "../../store/db.js";
import { eventTime } from "../../store/event-reads.js";
import type { PendingEvent } from "../../store/events.js";
import { newId } from "../../store/ids.js";
import { prepared } from "../../store/prepared.js";
import {
  AGGREGATE,
  type ChallengeAnswers,
  CODE_CHECKS,
  MAX_METADATA_KEYS,
  type SessionChallenges,
  type SessionChallengesJson,
  type SessionChanges,
  type SessionChecks,
  type SessionFactorsJson,
  type SessionUserAgentJson,
} from "./model.js";
import type { SessionRow, UserRow } from "../../store/schema.js";
import type { WebAuthnFactor } from "../user-webauthn/factor.js";
import { startWebAuthnCheck, verifyWebAuthnCheck } from "../user-webauthn/sign-in.js";
import type { Actor, ObjectDetails } from "../details.js";
import { failedPrecondition, invalidArgument, notFound, permissionDenied, resourceExhausted } from "../errors.js";
import type { SettingsKind } from "../settings/kind.js";
import { loginSettingsOf } from "../settings/login.js";
import { checkSecondFactors, sendSignInCode } from "../user-factor/checks.js";
import { secondFactorDue } from "../user-factor/due.js";
import type { CodeCheck } from "../user-factor/model.js";
import { loginUserById, userByLoginName, type LoginUser } from "../user/login-names.js";
import { clearFailedChecks } from "../user/lockout.js";
import { checkSignInPassword } from "../user/password-check.js";
import type { VerificationSettings } from "../user/code-messages.js";
import { constantTimeEqual } from "../../crypto/equal.js";
import { checkIdpIntent, recordIdpIntentCheck } from "./idp-intent-check.js";
import { methodOf, passedChecks, sessionSignIns } from "./sign-ins.js";
import { rowUser, stateRefusal, type SignInCheck, type SignInRecorder } from "../audit/sign-ins.js";

/**
 * Creating and changing sessions. A write runs in three parts: the user is found and a
 * password verified before any transaction (Argon2id is slow on purpose; no connection waits
 * for it); then one transaction checks the codes, changes the session and sends the
 * challenges. A failed check changes no session: its transaction keeps only the failure (the
 * lockout count, a code voided by too many tries) and the call fails after it committed.
 */

export interface SessionDeps {
  hasher: PasswordHasher;
  /** The master key's box and the sign-in codes' lifetime and outbox (domain/user/code-messages.ts). */
  codes: VerificationSettings;
  /** The login settings' kind with the configured lockout default. */
  loginSettings: SettingsKind;
  /** Checks per user (shared with the login pages) and per session, per minute. */
  limits: { perUser: WindowLimiter; perSession: WindowLimiter };
  /** The audit log's sign-in events: every check records its attempt (sign-ins.ts). */
  signIns: SignInRecorder;
}

/** How a write reaches the database: reads, transactions holding the instance, and word that access changed (a user locked). */
export interface SessionStore {
  db: Db;
  transact<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  accessChanged(): void;
}

/** One answer for a wrong login name or password: a session never tells which was wrong. */
const wrongLogin = () => invalidArgument("the login name or password is not valid");

type SessionValues = Record<"instance_id" | "id" | "token_hash" | "factors" | "metadata" | "user_agent" | "challenges", string> &
  Record<"user_id", string | null> &
  Record<"expires_at", Date | null> &
  Record<"created_at" | "change_date", Date> &
  Record<"sequence", number>;

/** What a create and a patch both write: the session's state after the change (and its change date, the time of its event). */
const STATE_COLUMNS = ["token_hash", "user_id", "factors", "metadata", "challenges", "expires_at", "sequence"] as const;
type SessionState = Pick<SessionValues, (typeof STATE_COLUMNS)[number]>;

/** The stand-ins of prepared() answer only for the keys asked for: the columns are named. */
const columns = <K extends keyof SessionValues>(p: Pick<SessionValues, K>, keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, p[k]])) as Pick<SessionValues, K>;

/** The time of the session's event `p.sequence`, which the same write queued (queueEvents). */
const changedAt = (p: Pick<SessionValues, "instance_id" | "id" | "sequence">) => eventTime(p.instance_id, AGGREGATE, p.id, p.sequence);

/** Sent with the commit (commitWith): a create and a patch are each one round trip after their checks. */
const insertSession = prepared((db, p: Omit<SessionValues, "created_at" | "change_date">) => {
  const added = changedAt(p);
  return db
    .insertInto("sessions")
    .values({ ...columns(p, ["instance_id", "id", "user_agent", ...STATE_COLUMNS]), created_at: added, change_date: added })
    .returning("change_date");
});

const updateSession = prepared((db, p: SessionState & Pick<SessionValues, "instance_id" | "id">) =>
  db
    .updateTable("sessions")
    .set({ ...columns(p, STATE_COLUMNS), change_date: changedAt(p) })
    .where("instance_id", "=", p.instance_id)
    .where("id", "=", p.id)
    .returning("change_date"),
);

/** The session's columns after a change that gave it `token` and is its event `sequence`. */
function sessionState(
  token: string,
  user: UserRow | undefined,
  factors: SessionFactorsJson,
  metadata: Record<string, string>,
  pending: SessionChallengesJson,
  expiresAt: Date | null,
  sequence: number,
): SessionState {
  return {
    token_hash: hashToken(token),
    user_id: user?.id ?? null,
    factors: JSON.stringify(factors),
    metadata: JSON.stringify(metadata),
    challenges: JSON.stringify(pending),
    expires_at: expiresAt,
    sequence,
  };
}

export async function createSession(
  store: SessionStore,
  deps: SessionDeps,
  actor: Actor,
  changes: SessionChanges,
  userAgent: SessionUserAgentJson,
): Promise<{ details: ObjectDetails; token: string; challenges: ChallengeAnswers }> {
  const id = newId();
  if (changes.checks.webAuthN)
    throw invalidArgument("checks.webAuthN answers a challenge: request challenges.webAuthN first, then answer it with PatchSession");
  const record = sessionSignIns(deps.signIns, actor, userAgent);
  const user = await checkedFirstFactors(store, deps, actor, record, id, undefined, changes.checks);
  const token = newOpaqueToken();
  const charged = new Set<string>();
  const outcome = await store.transact(async (tx) => {
    // The external login first: a code is used up by its check, and must not be for a call that fails after it.
    const intent = changes.checks.idpIntent ? await checkIdpIntent(tx, deps.loginSettings, actor, user, changes.checks.idpIntent) : undefined;
    if (intent && !intent.ok) return intent;
    const failure = await checkCodes(tx, deps, user, changes.checks);
    if (failure) return failure;
    const now = new Date();
    const events: PendingEvent[] = [
      { type: "session.added", payload: { ...(userAgent.fingerprintId && { fingerprintId: userAgent.fingerprintId }) } },
      ...checkEvents(user, changes.checks),
    ];
    let factors = withChecks({}, user, changes.checks, now);
    if (intent) {
      const recorded = await recordIdpIntentCheck(tx, actor, id, intent, user?.id, factors, now);
      factors = recorded.factors;
      events.push(...recorded.events);
    }
    const sessionUser = intent?.user ?? user;
    const metadata = mergedMetadata({}, changes.metadata);
    if (Object.keys(metadata).length > 0) events.push({ type: "session.metadata.set", payload: { keys: Object.keys(changes.metadata) } });
    const expiresAt = changes.lifetimeMs === undefined ? null : new Date(now.getTime() + changes.lifetimeMs);
    if (expiresAt) events.push({ type: "session.lifetime.set", payload: { expiresAt: expiresAt.toISOString() } });
    const { answers: challenges, pending } = await startChallenges(tx, deps, actor, sessionUser, changes.challenges, charged);
    events.push(...challengeEvents(changes.challenges));
    const { sequence } = await queueEvents(tx, { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: sessionUser?.org_id }, 0, events, actor);
    const [row] = await insertSession.withCommit(tx, {
      instance_id: actor.instanceId,
      id,
      user_agent: JSON.stringify(userAgent),
      ...sessionState(token, sessionUser, factors, metadata, pending, expiresAt, sequence),
    });
    const details: ObjectDetails = { id, sequence, changeDate: row!.change_date, owner: { type: "instance", id: actor.instanceId } };
    return { ok: true as const, details, challenges, checks: passedChecks(changes.checks, user, undefined, intent?.user) };
  });
  return finish(store, record, outcome, (o) => ({ details: o.details, token, challenges: o.challenges }));
}

export async function patchSession(
  store: SessionStore,
  deps: SessionDeps,
  actor: Actor,
  id: string,
  givenToken: string,
  changes: SessionChanges,
): Promise<{ details: ObjectDetails; token: string; challenges: ChallengeAnswers }> {
  const before = await usableSession(store.db, actor.instanceId, id, givenToken);
  const record = sessionSignIns(deps.signIns, actor, before.user_agent);
  const user = await checkedFirstFactors(store, deps, actor, record, id, before, changes.checks);
  const token = newOpaqueToken();
  const charged = new Set<string>();
  const outcome = await store.transact(async (tx) => {
    // Locked, and its token checked again: of two patches with one token, one wins.
    const current = await usableSession(tx, actor.instanceId, id, givenToken, true);
    // The passkey first: a code is used up by its check, and must not be for a call that fails after it.
    const answered = changes.checks.webAuthN ? await checkWebAuthN(tx, deps, actor, current, user, changes.checks.webAuthN) : undefined;
    if (answered && !answered.ok) return answered;
    const intent = changes.checks.idpIntent ? await checkIdpIntent(tx, deps.loginSettings, actor, answered?.user ?? user, changes.checks.idpIntent) : undefined;
    if (intent && !intent.ok) return intent;
    const failure = await checkCodes(tx, deps, user, changes.checks);
    if (failure) return failure;
    const now = new Date();
    let factors = withChecks(current.factors, user, changes.checks, now);
    let sessionUser = user;
    const events = checkEvents(user, changes.checks, current.user_id ?? undefined);
    let pending = current.challenges;
    if (answered) {
      sessionUser = answered.user;
      factors = {
        ...factors,
        ...(!current.user_id && { user: { id: answered.user.id, checkedAt: now.toISOString() } }),
        webAuthN: { checkedAt: now.toISOString(), ...answered.factor },
      };
      if (!current.user_id) events.push({ type: "session.user.checked", payload: { userId: answered.user.id } });
      events.push({ type: "session.web_auth_n.checked", payload: { userVerified: answered.factor.userVerified } });
      // A challenge is answered once, rightly or not.
      pending = {};
    }
    if (intent) {
      const recorded = await recordIdpIntentCheck(tx, actor, id, intent, sessionUser?.id, factors, now);
      factors = recorded.factors;
      events.push(...recorded.events);
      sessionUser = intent.user;
    }
    const metadata = mergedMetadata(current.metadata, changes.metadata);
    if (Object.keys(changes.metadata).length > 0) events.push({ type: "session.metadata.set", payload: { keys: Object.keys(changes.metadata) } });
    const expiresAt = changes.lifetimeMs === undefined ? current.expires_at : new Date(now.getTime() + changes.lifetimeMs);
    if (changes.lifetimeMs !== undefined) events.push({ type: "session.lifetime.set", payload: { expiresAt: expiresAt!.toISOString() } });
    const started = await startChallenges(tx, deps, actor, sessionUser, changes.challenges, charged);
    if (started.pending.webAuthN) pending = started.pending;
    events.push(...challengeEvents(changes.challenges));
    // Every change answers a new token, so one with no other event still leaves one.
    if (events.length === 0) events.push({ type: "session.token.renewed", payload: {} });
    const { sequence } = await queueEvents(
      tx,
      { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: sessionUser?.org_id },
      current.sequence,
      events,
      actor,
    );
    // The row is locked: the update cannot miss it.
    const [row] = await updateSession.withCommit(tx, {
      instance_id: actor.instanceId,
      id,
      ...sessionState(token, sessionUser, factors, metadata, pending, expiresAt ?? null, sequence),
    });
    const challenges = started.answers;
    const details: ObjectDetails = { id, sequence, changeDate: row!.change_date, owner: { type: "instance", id: actor.instanceId } };
    return {
      ok: true as const,
      details,
      challenges,
      checks: passedChecks(changes.checks, user, answered && { user: answered.user, named: !user }, intent?.user),
    };
  });
  return finish(store, record, outcome, (o) => ({ details: o.details, token, challenges: o.challenges }));
}

export async function deleteSession(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  const current = await tx
    .selectFrom("sessions as s")
    .selectAll("s")
    // The user's organization, as the session's other events carry it (the audit log's scope).
    .select((eb) =>
      eb.selectFrom("users as u").select("u.org_id").whereRef("u.instance_id", "=", "s.instance_id").whereRef("u.id", "=", "s.user_id").as("user_org"),
    )
    .where("s.instance_id", "=", actor.instanceId)
    .where("s.id", "=", id)
    .forUpdate()
    .executeTakeFirst();
  if (!current) throw notFound(`session ${id} not found`);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: current.user_org ?? "" },
    current.sequence,
    [{ type: "session.terminated", payload: {} }],
    actor,
  );
  await tx.deleteFrom("sessions").where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  return { id, sequence: appended.sequence, changeDate: appended.createdAt, owner: { type: "instance", id: actor.instanceId } };
}

const sessionRead = prepared((db, p: { instanceId: string; id: string }) =>
  db.selectFrom("sessions").selectAll().where("instance_id", "=", p.instanceId).where("id", "=", p.id),
);
const sessionLocked = prepared((db, p: { instanceId: string; id: string }) =>
  db.selectFrom("sessions").selectAll().where("instance_id", "=", p.instanceId).where("id", "=", p.id).forUpdate(),
);

/** The session a token patches: it exists, the token is its current one, and it has not expired. */
async function usableSession(db: Db | Tx, instanceId: string, id: string, token: string, lock = false): Promise<SessionRow> {
  const [row] = await (lock ? sessionLocked : sessionRead)(db, { instanceId, id });
  if (!row) throw notFound(`session ${id} not found`);
  if (!constantTimeEqual(row.token_hash, hashToken(token))) throw permissionDenied("session_token is not the session's current token");
  if (row.expires_at && new Date(row.expires_at).getTime() <= Date.now()) throw failedPrecondition(`session ${id} has expired`);
  return row;
}

/**
 * The session's user (named now, or earlier) and, when asked, its password: before any
 * transaction. A user who cannot sign in, or a wrong password, fails the call here; a wrong
 * password counts toward the lockout first. Each is an attempt `record`ed, as the password's success is.
 */
async function checkedFirstFactors(
  store: SessionStore,
  deps: SessionDeps,
  actor: Actor,
  record: (check: SignInCheck) => void,
  sessionId: string,
  before: SessionRow | undefined,
  checks: SessionChecks,
): Promise<UserRow | undefined> {
  const named = checks.user ? await userNamed(store.db, actor.instanceId, checks.user) : undefined;
  if (checks.user && !named) {
    record({ method: methodOf(checks), outcome: "unknown_name" });
    throw checks.password !== undefined ? wrongLogin() : notFound("no user of this instance has that ID or login name");
  }
  if (named && before?.user_id && named.id !== before.user_id)
    throw failedPrecondition("the session is for another user: its user cannot change (create another session)");
  const userId = named?.id ?? before?.user_id ?? undefined;
  // A passkey and an external login name their user themselves; every other check needs one.
  const needsUser = Object.entries(checks).some(([name, value]) => name !== "user" && name !== "webAuthN" && name !== "idpIntent" && value !== undefined);
  const namesUser = checks.webAuthN !== undefined || checks.idpIntent !== undefined;
  if (!userId) {
    if (needsUser) throw invalidArgument("checks need a user: give checks.user (or patch a session that has one)");
    if (namesUser && !deps.limits.perSession.take(`${actor.instanceId} ${sessionId}`))
      throw resourceExhausted("too many checks for this session; wait a minute");
    return undefined;
  }
  const found = named ?? (await loginUserById(store.db, actor.instanceId, userId));
  if (!found) throw failedPrecondition("the session's user no longer exists or cannot sign in");
  const user = found.row;
  const refused = stateRefusal(user.state);
  if (refused) {
    // A write that checks nothing (metadata of a locked user's session) is no attempt.
    if (Object.values(checks).some((check) => check !== undefined)) record({ method: methodOf(checks), outcome: refused, user: rowUser(user) });
    throw failedPrecondition(`the user is ${refused === "locked" ? "locked" : "not active"}`);
  }
  if (needsUser || namesUser) {
    if (!deps.limits.perUser.take(`${actor.instanceId} ${user.id}`) || !deps.limits.perSession.take(`${actor.instanceId} ${sessionId}`)) {
      throw resourceExhausted("too many checks for this user or session; wait a minute");
    }
  }
  if (checks.password !== undefined) {
    const maxAttempts = async () => (await loginSettingsOf(store.db, actor.instanceId, user.org_id, deps.loginSettings)).maxPasswordAttempts;
    const checked = await checkSignInPassword(store, deps.hasher, actor.instanceId, found, checks.password, maxAttempts);
    record({ method: "password", outcome: checked.ok ? "succeeded" : "wrong_password", user: rowUser(user) });
    if (!checked.ok) throw wrongLogin();
    // A right password alone clears the count only when no second factor is to follow: else
    // typing it again would give back the guesses at a code (a right code clears it).
    if (!CODE_CHECKS.some(([name]) => checks[name] !== undefined) && user.failed_checks > 0) {
      const settings = await loginSettingsOf(store.db, actor.instanceId, user.org_id, deps.loginSettings);
      const due = await secondFactorDue(store.db, user, settings, false);
      if (!due.ask && !due.setUp) await clearFailedChecks(store.db, actor.instanceId, user.id);
    }
  }
  return user;
}

/** A human user by ID or login name, of an active organization, with the password's hash: one statement. */
function userNamed(db: Db, instanceId: string, named: NonNullable<SessionChecks["user"]>): Promise<LoginUser | undefined> {
  return "userId" in named ? loginUserById(db, instanceId, named.userId) : userByLoginName(db, instanceId, named.loginName);
}

/** A refused write: its error, whether it locked the user, and the attempt it was (none for a misuse, such as a missing challenge). */
type Failure = { ok: false; error: Error; locked: boolean; check?: SignInCheck };

/** The code checks, in the write's transaction, all or nothing: the first wrong one ends them (and is counted), and no right one is used up. */
async function checkCodes(tx: Tx, deps: SessionDeps, user: UserRow | undefined, checks: SessionChecks): Promise<Failure | undefined> {
  const answers = CODE_CHECKS.flatMap(([name, check]) => (checks[name] === undefined ? [] : [[check, checks[name]!] as [CodeCheck, string]]));
  if (!user || answers.length === 0) return undefined;
  const { maxPasswordAttempts } = await loginSettingsOf(tx, user.instance_id, user.org_id, deps.loginSettings);
  const outcome = await checkSecondFactors(tx, deps.codes.box, user, answers, maxPasswordAttempts);
  if (outcome.ok) return undefined;
  const name = CODE_CHECKS.find(([, check]) => check === outcome.wrong)![0];
  return {
    ok: false,
    error: invalidArgument(`checks.${name}: the code is not valid`),
    locked: outcome.locked,
    check: { method: outcome.wrong, outcome: "wrong_code", user: rowUser(user) },
  };
}

/**
 * The write's result, or its failure thrown once the transaction that counted it committed;
 * its attempts recorded then, once (a transaction may run again).
 */
function finish<T extends { ok: true; checks: SignInCheck[] }, R>(
  store: SessionStore,
  record: (check: SignInCheck) => void,
  outcome: T | Failure,
  result: (o: T) => R,
): R {
  if (outcome.ok) {
    outcome.checks.forEach(record);
    return result(outcome);
  }
  if (outcome.check) record(outcome.check);
  if (outcome.locked) store.accessChanged();
  throw outcome.error;
}

function checkEvents(user: UserRow | undefined, checks: SessionChecks, previousUser?: string): PendingEvent[] {
  const events: PendingEvent[] = [];
  if (checks.user && user && user.id !== previousUser) events.push({ type: "session.user.checked", payload: { userId: user.id } });
  if (checks.password !== undefined) events.push({ type: "session.password.checked", payload: {} });
  for (const [name, check] of CODE_CHECKS) if (checks[name] !== undefined) events.push({ type: `session.${check}.checked`, payload: {} });
  return events;
}

function withChecks(factors: SessionFactorsJson, user: UserRow | undefined, checks: SessionChecks, now: Date): SessionFactorsJson {
  const at = now.toISOString();
  const next: SessionFactorsJson = { ...factors };
  if (checks.user && user) next.user = { id: user.id, checkedAt: at };
  if (checks.password !== undefined) next.password = { checkedAt: at };
  for (const [name] of CODE_CHECKS) if (checks[name] !== undefined) next[name] = { checkedAt: at };
  return next;
}

/** Metadata after a change: keys with an empty value go; at most MAX_METADATA_KEYS remain. */
function mergedMetadata(current: Record<string, string>, set: Record<string, Uint8Array>): Record<string, string> {
  const next = { ...current };
  for (const [key, value] of Object.entries(set)) {
    if (value.length === 0) delete next[key];
    else next[key] = Buffer.from(value).toString("base64");
  }
  if (Object.keys(next).length > MAX_METADATA_KEYS) throw invalidArgument(`metadata: a session keeps at most ${MAX_METADATA_KEYS} keys`);
  return next;
}

const CHALLENGES = [
  ["otpEmail", "otp_email"],
  ["otpSms", "otp_sms"],
] as const;

/**
 * Starts the requested challenges: one-time codes sent (or answered) to the session's user, a
 * passkey challenge whose options are answered and whose challenge the session keeps for its
 * answer.
 */
async function startChallenges(
  tx: Tx,
  deps: SessionDeps,
  actor: Actor,
  user: UserRow | undefined,
  challenges: SessionChallenges,
  charged: Set<string>,
): Promise<{ answers: ChallengeAnswers; pending: SessionChallengesJson }> {
  const answers: ChallengeAnswers = {};
  for (const [name, type] of CHALLENGES) {
    const asked = challenges[name];
    if (!asked) continue;
    if (!user) throw invalidArgument(`challenges.${name} needs a user: give checks.user (or patch a session that has one)`);
    // Every code sent is a message to a person (and an SMS costs): one budget per user with
    // the checks, charged once per code of a call however often its transaction runs (a retry).
    if (!charged.has(name)) {
      if (!deps.limits.perUser.take(`${actor.instanceId} ${user.id}`)) throw resourceExhausted("too many codes or checks for this user; wait a minute");
      charged.add(name);
    }
    const code = await sendSignInCode(tx, deps.codes, actor, user, type, asked.returnCode);
    if (code !== undefined) answers[name] = code;
  }
  const pending: SessionChallengesJson = {};
  if (challenges.webAuthN) {
    const started = await startWebAuthnCheck(tx, actor.instanceId, { ...challenges.webAuthN, ...(user && { userId: user.id }) });
    answers.webAuthN = started.options;
    pending.webAuthN = started.pending;
  }
  return { answers, pending };
}

/**
 * The answer to the session's passkey or security key challenge, by the one check the login
 * pages use too (user-webauthn/sign-in.ts): of the session's user, or naming it when the
 * session has none yet.
 */
async function checkWebAuthN(
  tx: Tx,
  deps: SessionDeps,
  actor: Actor,
  session: SessionRow,
  user: UserRow | undefined,
  answer: NonNullable<SessionChecks["webAuthN"]>,
): Promise<{ ok: true; user: UserRow; factor: WebAuthnFactor } | Failure> {
  const challenge = session.challenges.webAuthN;
  const refuse = (why: string, locked = false, check?: SignInCheck): Failure => ({
    ok: false,
    error: invalidArgument(`checks.webAuthN: ${why}`),
    locked,
    ...(check && { check }),
  });
  if (!challenge) return refuse("the session has no passkey challenge to answer: request challenges.webAuthN first");
  // A challenge is answered once, rightly or not.
  await tx.updateTable("sessions").set({ challenges: "{}" }).where("instance_id", "=", actor.instanceId).where("id", "=", session.id).execute();
  const checked = await verifyWebAuthnCheck(tx, actor, deps.loginSettings, challenge, answer, user);
  if (checked.ok) return checked;
  const check: SignInCheck = { method: user ? "webauthn" : "passkey", outcome: checked.refusal, ...(checked.user && { user: rowUser(checked.user) }) };
  return refuse(checked.expired ? "the passkey challenge has expired: request challenges.webAuthN again" : checked.reason, checked.locked, check);
}

function challengeEvents(challenges: SessionChallenges): PendingEvent[] {
  return CHALLENGES.filter(([name]) => challenges[name]).map(([name, type]) => ({
    type: `session.${type}.challenged`,
    payload: { returned: challenges[name]!.returnCode },
  }));
}
