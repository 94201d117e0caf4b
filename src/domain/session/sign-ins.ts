import { originOf } from "../../store/editor.js";
import { CODE_CHECKS, type SessionChecks, type SessionUserAgentJson } from "./model.js";
import type { UserRow } from "../../store/schema.js";
import { rowUser, type SignInCheck, type SignInMethod, type SignInRecorder } from "../audit/sign-ins.js";
import type { Actor } from "../details.js";

/**
 * The session API's sign-in attempts (channel `session`; domain/audit/sign-ins.ts): each
 * check of a CreateSession or PatchSession, right or wrong. They come through the login UI's
 * client for the person whose address and user agent it gave for the session (else its own,
 * as the session keeps them): the per-address bound then counts the person's address, not
 * the login UI's, which all of its sign-ins share.
 */
export function sessionSignIns(recorder: SignInRecorder, actor: Actor, userAgent: SessionUserAgentJson): (check: SignInCheck) => void {
  const origin = originOf({ client: actor.origin?.client, ip: userAgent.ip || actor.origin?.ip, userAgent: userAgent.description || actor.origin?.userAgent });
  return (check) => recorder.record({ instanceId: actor.instanceId, channel: "session", origin, ...check });
}

/** What a write refused as a whole (its user unknown, locked, inactive) tried: its first factor, else naming its user. */
export function methodOf(checks: SessionChecks): SignInMethod {
  if (checks.password !== undefined) return "password";
  const code = CODE_CHECKS.find(([name]) => checks[name] !== undefined);
  if (code) return code[1];
  return checks.webAuthN ? "webauthn" : checks.idpIntent ? "idp" : "login_name";
}

/**
 * The checks after the password of a write that passed them all: its codes, its key (a
 * passkey when it named the user), its external login. The password's is recorded when it is
 * checked, before them.
 */
export function passedChecks(
  checks: SessionChecks,
  user: UserRow | undefined,
  key: { user: UserRow; named: boolean } | undefined,
  intent: UserRow | undefined,
): SignInCheck[] {
  const passed: SignInCheck[] = [];
  if (user) for (const [name, method] of CODE_CHECKS) if (checks[name] !== undefined) passed.push({ method, outcome: "succeeded", user: rowUser(user) });
  if (key) passed.push({ method: key.named ? "passkey" : "webauthn", outcome: "succeeded", user: rowUser(key.user) });
  if (intent) passed.push({ method: "idp", outcome: "succeeded", user: rowUser(intent) });
  return passed;
}
