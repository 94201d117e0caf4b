import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { UserVerification } from "../../../domain/user-webauthn/authentication.js";
import { durationMs, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { TimestampFilterMethod } from "../../../../gen/platform/resources/object/v3alpha/object_pb.js";
import {
  UserVerificationRequirement,
  type Checks,
  type ChallengesSchema,
  type RequestChallenges,
  type SessionSchema,
  type SessionSearchFilter,
  type UserAgent,
} from "../../../../gen/platform/resources/session/v3alpha/session_pb.js";
import type { ChallengeAnswers, SessionChallenges, SessionChanges, SessionChecks, SessionUserAgentJson, SessionView } from "../../../domain/session/model.js";
import type { SessionFilter } from "../../../domain/session/queries.js";
import type { Duration } from "@bufbuild/protobuf/wkt";
import { detailsToProto } from "../convert.js";

function checksFromProto(c: Checks | undefined): SessionChecks {
  if (!c) return {};
  const user = c.user?.search;
  return {
    ...(user?.case === "userId" && { user: { userId: user.value } }),
    ...(user?.case === "loginName" && { user: { loginName: user.value } }),
    ...(c.password && { password: c.password.password }),
    ...(c.totp && { totp: c.totp.code }),
    ...(c.otpEmail && { otpEmail: c.otpEmail.code }),
    ...(c.otpSms && { otpSms: c.otpSms.code }),
    ...(c.recoveryCode && { recoveryCode: c.recoveryCode.code }),
    ...(c.webAuthN?.credentialAssertionData && { webAuthN: c.webAuthN.credentialAssertionData as unknown as AuthenticationResponseJSON }),
    ...(c.idpIntent && { idpIntent: { id: c.idpIntent.idpIntentId, token: c.idpIntent.idpIntentToken } }),
  };
}

const USER_VERIFICATION: Record<UserVerificationRequirement, UserVerification> = {
  [UserVerificationRequirement.UNSPECIFIED]: "required",
  [UserVerificationRequirement.REQUIRED]: "required",
  [UserVerificationRequirement.PREFERRED]: "preferred",
  [UserVerificationRequirement.DISCOURAGED]: "discouraged",
};

/** What requested challenges answer, as the API says it. */
export function challengeAnswersToProto(a: ChallengeAnswers): MessageInitShape<typeof ChallengesSchema> {
  return {
    ...(a.otpEmail !== undefined && { otpEmail: a.otpEmail }),
    ...(a.otpSms !== undefined && { otpSms: a.otpSms }),
    // As JSON: the library leaves absent options as undefined keys, which a Struct cannot hold (its JSON form fails).
    ...(a.webAuthN && { webAuthN: { publicKeyCredentialRequestOptions: JSON.parse(JSON.stringify(a.webAuthN)) as JsonObject } }),
  };
}

function challengesFromProto(c: RequestChallenges | undefined): SessionChallenges {
  return {
    ...(c?.otpEmail && { otpEmail: { returnCode: c.otpEmail.returnCode } }),
    ...(c?.otpSms && { otpSms: { returnCode: c.otpSms.returnCode } }),
    ...(c?.webAuthN && { webAuthN: { domain: c.webAuthN.domain, userVerification: USER_VERIFICATION[c.webAuthN.userVerificationRequirement] } }),
  };
}

export function changesFromProto(r: {
  checks?: Checks;
  challenges?: RequestChallenges;
  metadata: Record<string, Uint8Array>;
  lifetime?: Duration;
}): SessionChanges {
  return {
    checks: checksFromProto(r.checks),
    challenges: challengesFromProto(r.challenges),
    metadata: r.metadata,
    lifetimeMs: r.lifetime && durationMs(r.lifetime),
  };
}

/** What the request says of its user agent, completed from the call itself. */
export function userAgentFromProto(given: UserAgent | undefined, call: { ip: string | undefined; userAgent: string | null }): SessionUserAgentJson {
  const ip = given?.ip || call.ip;
  const description = given?.description || call.userAgent?.slice(0, 500);
  return { ...(given?.fingerprintId && { fingerprintId: given.fingerprintId }), ...(ip && { ip }), ...(description && { description }) };
}

export function sessionToProto(s: SessionView): MessageInitShape<typeof SessionSchema> {
  const at = (d: Date | undefined) => d && { verifiedAt: timestampFromDate(d) };
  return {
    details: detailsToProto(s.details),
    creationDate: timestampFromDate(s.createdAt),
    factors: {
      ...(s.user && {
        user: {
          verifiedAt: timestampFromDate(s.user.checkedAt),
          id: s.user.id,
          loginName: s.user.loginName,
          displayName: s.user.displayName,
          organizationId: s.user.orgId,
        },
      }),
      password: at(s.factors.password),
      totp: at(s.factors.totp),
      otpEmail: at(s.factors.otpEmail),
      otpSms: at(s.factors.otpSms),
      recoveryCode: at(s.factors.recoveryCode),
      ...(s.webAuthN && { webAuthN: { verifiedAt: timestampFromDate(s.webAuthN.checkedAt), userVerified: s.webAuthN.userVerified } }),
      ...(s.idpIntent && { idpIntent: { verifiedAt: timestampFromDate(s.idpIntent.checkedAt), idpId: s.idpIntent.idpId } }),
    },
    metadata: s.metadata,
    userAgent: s.userAgent,
    ...(s.expiresAt && { expirationDate: timestampFromDate(s.expiresAt) }),
  };
}

const OPS: Record<TimestampFilterMethod, "=" | ">" | ">=" | "<" | "<="> = {
  [TimestampFilterMethod.EQUALS]: "=",
  [TimestampFilterMethod.GREATER]: ">",
  [TimestampFilterMethod.GREATER_OR_EQUALS]: ">=",
  [TimestampFilterMethod.LESS]: "<",
  [TimestampFilterMethod.LESS_OR_EQUALS]: "<=",
};

/** Validation has made sure a filter is set. */
export function sessionFilterFromProto(f: SessionSearchFilter): SessionFilter {
  const filter = f.filter;
  switch (filter.case) {
    case "ids":
      return { kind: "ids", ids: filter.value.ids };
    case "userId":
      return { kind: "user", userId: filter.value };
    case "creationDate":
      return { kind: "created", date: timestampDate(filter.value.creationDate!), op: OPS[filter.value.method] };
    case "userAgentFingerprintId":
      return { kind: "fingerprint", fingerprintId: filter.value };
    default:
      throw new Error("a session filter without a condition passed validation");
  }
}
