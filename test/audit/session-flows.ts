import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { expect } from "vitest";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { protocolClient } from "../support/clients.js";
import type { SoftwareAuthenticator } from "../support/webauthn-authenticator.js";
import { DAY_MS, fromNow, humanUser, uniqueName } from "../users/helpers.js";
import { totpCode } from "../users/totp.js";
import { calls, type Flow } from "./flow.js";
import { b64, newPassword, registerPasskey, registerSecurityKey, RP_ID } from "./user-flows.js";

/** The token of a login UI's server: a service account with the instance role LOGIN_CLIENT. */
export async function loginClient(f: Flow): Promise<string> {
  const id = (await f.ok(PlatformUsers, "CreateUser", { user: { username: uniqueName("login-ui"), machine: { name: "Login UI" } } })).details.id as string;
  await f.ok(PlatformMemberships, "CreateMembership", { membership: { userId: id, roles: ["LOGIN_CLIENT"] } });
  return (await f.ok(PlatformUsers, "AddPersonalAccessToken", { id, pat: { expirationDate: fromNow(DAY_MS) } })).token as string;
}

/**
 * A person signing in with every check a session takes: the password, codes by email and
 * SMS (asked for as challenges), a TOTP, a recovery code; with metadata, a lifetime and a
 * renewed token; then the session is deleted.
 */
export async function sessionFlows(f: Flow, ui: string): Promise<void> {
  const users = calls(f, PlatformUsers);
  const sessions = (method: string, request: JsonObject) => calls(f, PlatformSessions)(method, request, ui);
  const password = newPassword(f, "session");
  const contacts = { email: { address: `${uniqueName("s")}@mail.example`, isVerified: true }, phone: { number: "+41791112233", isVerified: true } };
  const userId = (await users("CreateUser", { user: humanUser(uniqueName("signs-in"), { password, ...contacts }) })).details.id as string;
  const { secret } = await users("AddTOTP", { id: userId });
  // Verified with the code of now, the session takes the next step's: a code is taken once, and only after the last one taken.
  await users("VerifyTOTP", { id: userId, verification: { code: totpCode(secret) } });
  await users("AddOTPEmail", { id: userId });
  await users("AddOTPSMS", { id: userId });
  const { codes } = await users("GenerateRecoveryCodes", { id: userId });

  const made = await sessions("CreateSession", {
    checks: { user: { userId }, password: { password } },
    metadata: { step: b64("password") },
    lifetime: "3600s",
    userAgent: { fingerprintId: "audit-fingerprint" },
    challenges: { otpEmail: { returnCode: true } },
  });
  let token = made.sessionToken as string;
  const patch = async (request: JsonObject) => {
    token = (await sessions("PatchSession", { id: made.sessionId, sessionToken: token, ...request })).sessionToken as string;
  };
  await patch({ checks: { otpEmail: { code: made.challenges.otpEmail } } });
  const texted = await sessions("PatchSession", { id: made.sessionId, sessionToken: token, challenges: { otpSms: { returnCode: true } } });
  token = texted.sessionToken as string;
  await patch({ checks: { otpSms: { code: texted.challenges.otpSms } } });
  await patch({ checks: { totp: { code: totpCode(secret, 1) } } });
  await patch({ checks: { recoveryCode: { code: codes[0] } } });
  await patch({});
  await sessions("DeleteSession", { id: made.sessionId });
}

/**
 * Passkeys and security keys answering sessions' challenges, and answers whose signature
 * counter goes back: refused, and recorded as suspected clones.
 */
export async function webAuthnFlows(f: Flow, ui: string): Promise<void> {
  const password = newPassword(f, "webauthn");
  const userId = (await f.ok(PlatformUsers, "CreateUser", { user: humanUser(uniqueName("keys"), { password }) })).details.id as string;
  const passkey = await registerPasskey(f, userId);
  await signInWith(f, ui, passkey.authenticator, {}, 5);
  await refusedClone(f, ui, passkey.authenticator, {}, 5);
  const key = await registerSecurityKey(f, userId);
  const secondFactor = { checks: { user: { userId }, password: { password } }, userVerificationRequirement: "USER_VERIFICATION_REQUIREMENT_DISCOURAGED" };
  await signInWith(f, ui, key.authenticator, secondFactor, 7);
  await refusedClone(f, ui, key.authenticator, secondFactor, 7);
}

interface ChallengeRequest {
  checks?: JsonObject;
  userVerificationRequirement?: string;
}

async function challenged(f: Flow, ui: string, request: ChallengeRequest) {
  const made = await f.ok(
    PlatformSessions,
    "CreateSession",
    {
      ...(request.checks && { checks: request.checks }),
      challenges: {
        webAuthN: { domain: RP_ID, ...(request.userVerificationRequirement && { userVerificationRequirement: request.userVerificationRequirement }) },
      },
    },
    ui,
  );
  return { id: made.sessionId as string, token: made.sessionToken as string, options: made.challenges.webAuthN.publicKeyCredentialRequestOptions };
}

const answer = (authenticator: SoftwareAuthenticator, options: PublicKeyCredentialRequestOptionsJSON, counter: number) =>
  authenticator.get(options, { counter }) as unknown as JsonObject;

async function signInWith(f: Flow, ui: string, authenticator: SoftwareAuthenticator, request: ChallengeRequest, counter: number): Promise<void> {
  const s = await challenged(f, ui, request);
  await f.ok(
    PlatformSessions,
    "PatchSession",
    { id: s.id, sessionToken: s.token, checks: { webAuthN: { credentialAssertionData: answer(authenticator, s.options, counter) } } },
    ui,
  );
}

async function refusedClone(f: Flow, ui: string, authenticator: SoftwareAuthenticator, request: ChallengeRequest, counter: number): Promise<void> {
  const s = await challenged(f, ui, request);
  const refused = await protocolClient(PlatformSessions, "grpc", f.server.baseUrl).call(
    "PatchSession",
    { id: s.id, sessionToken: s.token, checks: { webAuthN: { credentialAssertionData: answer(authenticator, s.options, counter) } } },
    ui,
  );
  expect(refused, "an answer whose counter does not move forward").toMatchObject({ ok: false, code: Code.InvalidArgument });
}
