import type { JsonObject } from "@bufbuild/protobuf";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { SoftwareAuthenticator } from "../support/webauthn-authenticator.js";
import { DAY_MS, fromNow, humanUser, uniqueName } from "../users/helpers.js";
import { totpCode } from "../users/totp.js";
import { calls, type Flow } from "./flow.js";

/** The relying party of passkeys and security keys: the test server's host. */
export const RP_ID = "localhost";

/** A password of the flows: unique, so that a leak names its flow. */
export const newPassword = (f: Flow, label: string): string => {
  const password = `${label}#Pa55-${Math.random().toString(36).slice(2, 10)}`;
  f.keep(password);
  return password;
};

export const b64 = (text: string) => Buffer.from(text).toString("base64");

/** A person's contacts, passwords, metadata, second factors and passkeys, each set and taken away again. */
export async function personFlows(f: Flow): Promise<void> {
  const users = calls(f, PlatformUsers);
  const made = await users("CreateUser", {
    user: humanUser(uniqueName("audit"), { password: newPassword(f, "first"), phone: { number: "+41791234567" } }),
    returnCode: true,
  });
  const id = made.details.id as string;

  await users("VerifyEmail", { id, verification: { code: (await users("ResendEmailCode", { id, returnCode: true })).code } });
  await users("VerifyPhone", { id, verification: { code: (await users("ResendPhoneCode", { id, returnCode: true })).code } });
  await users("PatchUser", { id, user: { human: { nickName: "Ada", phone: { number: "+41797654321", isVerified: true } } } });
  await users("SetPassword", { id, password: { newPassword: newPassword(f, "set"), changeRequired: true } });
  const reset = await users("ResetPassword", { id, returnCode: true });
  await users("SetPassword", { id, password: { newPassword: newPassword(f, "reset"), verificationCode: reset.code } });
  const metadataValue = `metadata-value-${uniqueName("m")}`;
  f.keep(metadataValue);
  await users("SetMetadata", { id, metadata: [{ key: "department", value: b64(metadataValue) }] });
  await users("DeleteMetadata", { id, key: "department" });

  const { secret } = await users("AddTOTP", { id });
  await users("VerifyTOTP", { id, verification: { code: totpCode(secret) } });
  await users("RemoveTOTP", { id });
  for (const factor of ["OTPEmail", "OTPSMS"]) {
    await users(`Add${factor}`, { id });
    await users(`Remove${factor}`, { id });
  }
  await users("GenerateRecoveryCodes", { id });
  await users("RemoveRecoveryCodes", { id });

  const passkey = await registerPasskey(f, id);
  await users("RemovePasskey", { id, passkeyId: passkey.passkeyId });
  const key = await registerSecurityKey(f, id);
  await users("RemoveU2F", { id, u2fId: key.u2fId });

  for (const method of ["LockUser", "UnlockUser", "DeactivateUser", "ReactivateUser", "DeleteUser"]) await users(method, { id });
}

/** A person invited without a password, who accepts with a new invitation's code. */
export async function inviteFlow(f: Flow): Promise<void> {
  const users = calls(f, PlatformUsers);
  const id = (await users("CreateUser", { user: humanUser(uniqueName("invited")), returnCode: true })).details.id as string;
  const { code } = await users("ResendInvite", { id, returnCode: true });
  await users("SetPassword", { id, password: { newPassword: newPassword(f, "invited"), verificationCode: code } });
}

/** A service account's client secret, token and key, each made and taken away again. */
export async function machineFlows(f: Flow): Promise<void> {
  const users = calls(f, PlatformUsers);
  const id = (await users("CreateUser", { user: { username: uniqueName("svc"), machine: { name: "Audit service" } } })).details.id as string;
  await users("PatchUser", { id, user: { machine: { description: "reads the audit log" } } });
  await users("GenerateSecret", { id });
  await users("RemoveSecret", { id });
  const pat = await users("AddPersonalAccessToken", { id, pat: { expirationDate: fromNow(DAY_MS) } });
  await users("DeletePersonalAccessToken", { id, patId: pat.details.id });
  const key = await users("AddKey", { id, key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(DAY_MS) } });
  await users("DeleteKey", { id, keyId: key.details.id });
  await users("DeleteUser", { id });
}

/** A passkey registered for the person through the API, by a software authenticator. */
export async function registerPasskey(f: Flow, userId: string) {
  const authenticator = new SoftwareAuthenticator(f.server.baseUrl);
  const started = await f.ok(PlatformUsers, "StartPasskeyRegistration", { id: userId, domain: RP_ID });
  const answer = authenticator.create(started.publicKeyCredentialCreationOptions, { flags: { uv: true } });
  await f.ok(PlatformUsers, "FinishPasskeyRegistration", {
    id: userId,
    passkeyId: started.passkeyId,
    publicKeyCredential: answer as unknown as JsonObject,
    name: "Audit passkey",
  });
  keepPrivateKeys(f, authenticator);
  return { authenticator, passkeyId: started.passkeyId as string };
}

/** A security key (no user verification) registered for the person through the API. */
export async function registerSecurityKey(f: Flow, userId: string) {
  const authenticator = new SoftwareAuthenticator(f.server.baseUrl, { uv: false });
  const started = await f.ok(PlatformUsers, "StartU2FRegistration", { id: userId, domain: RP_ID });
  const answer = authenticator.create(started.publicKeyCredentialCreationOptions);
  await f.ok(PlatformUsers, "FinishU2FRegistration", {
    id: userId,
    u2fId: started.u2fId,
    publicKeyCredential: answer as unknown as JsonObject,
    name: "Audit key",
  });
  keepPrivateKeys(f, authenticator);
  return { authenticator, u2fId: started.u2fId as string };
}

function keepPrivateKeys(f: Flow, authenticator: SoftwareAuthenticator): void {
  for (const credential of authenticator.credentials) f.keep(credential.privateKey.export({ type: "pkcs8", format: "pem" }).toString());
}
