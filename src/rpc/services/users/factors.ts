import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { AuthMethodType } from "../../../../gen/platform/resources/user/v3alpha/credential_pb.js";
import type { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import type { SecretBox } from "../../../crypto/encryption.js";
import { invalidArgument } from "../../../domain/errors.js";
import { instanceName } from "../../../domain/instance/queries.js";
import { loginSettingsOf, type LoginSettings } from "../../../domain/settings/login.js";
import { addOtp, addTotp, generateRecoveryCodes, removeFactor, removeRecoveryCodes, verifyTotp } from "../../../domain/user-factor/commands.js";
import type { AuthMethod, FactorType } from "../../../domain/user-factor/model.js";
import { authMethodsOf } from "../../../domain/user-factor/queries.js";
import { getUserRow } from "../../../domain/user/queries.js";
import type { Tx } from "../../../store/db.js";
import { actorOf, selfOnlyKey, tenantOf } from "../../context.js";
import { detailsToProto } from "../convert.js";

type FactorMethods = Pick<
  ServiceImpl<typeof PlatformUsers>,
  | "addTOTP"
  | "verifyTOTP"
  | "removeTOTP"
  | "addOTPEmail"
  | "removeOTPEmail"
  | "addOTPSMS"
  | "removeOTPSMS"
  | "generateRecoveryCodes"
  | "removeRecoveryCodes"
  | "listAuthMethods"
>;

const METHOD_TYPES: Record<AuthMethod, AuthMethodType> = {
  password: AuthMethodType.PASSWORD,
  passkey: AuthMethodType.PASSKEY,
  idp: AuthMethodType.IDP,
  totp: AuthMethodType.TOTP,
  u2f: AuthMethodType.U2F,
  otp_email: AuthMethodType.OTP_EMAIL,
  otp_sms: AuthMethodType.OTP_SMS,
  recovery_codes: AuthMethodType.RECOVERY_CODES,
};

/**
 * The login settings that keep people acting on themselves from removing their last factor
 * while the settings force one (removeKeepingOne); none for administrators.
 */
export async function keepOneFor(ctx: HandlerContext, tx: Tx, userId: string): Promise<LoginSettings | undefined> {
  if (!ctx.values.get(selfOnlyKey)) return undefined;
  const user = await getUserRow(tx, tenantOf(ctx).id, userId);
  const settings = await loginSettingsOf(tx, tenantOf(ctx).id, user.org_id);
  return settings.forceMfa ? settings : undefined;
}

/**
 * The second factors of PlatformUsers (domain/user-factor). `onUser` is the service's write
 * on one user (locked, and the caller allowed to manage it); `read` a database for the
 * request.
 */
export function factorMethods(deps: {
  box: SecretBox;
  onUser: <T>(ctx: HandlerContext, userId: string, fn: (tx: Tx) => Promise<T>) => Promise<T>;
  read: (ctx: HandlerContext) => Parameters<typeof authMethodsOf>[0];
}): FactorMethods {
  const { box, onUser, read } = deps;
  const details = async (pending: Promise<Parameters<typeof detailsToProto>[0]>) => ({ details: detailsToProto(await pending) });
  const remove = (ctx: HandlerContext, userId: string, type: FactorType) =>
    details(onUser(ctx, userId, async (tx) => removeFactor(tx, actorOf(ctx), userId, type, await keepOneFor(ctx, tx, userId))));
  return {
    async addTOTP(req, ctx) {
      const added = await onUser(ctx, req.id, async (tx) => addTotp(tx, actorOf(ctx), box, req.id, await instanceName(tx, tenantOf(ctx).id)));
      return { details: detailsToProto(added.details), secret: added.secret, uri: added.uri };
    },
    async verifyTOTP(req, ctx) {
      const verified = await onUser(ctx, req.id, (tx) => verifyTotp(tx, actorOf(ctx), box, req.id, req.verification!.code));
      if (!verified) throw invalidArgument("the code is not valid");
      return { details: detailsToProto(verified) };
    },
    removeTOTP: (req, ctx) => remove(ctx, req.id, "totp"),
    addOTPEmail: (req, ctx) => details(onUser(ctx, req.id, (tx) => addOtp(tx, actorOf(ctx), req.id, "otp_email"))),
    removeOTPEmail: (req, ctx) => remove(ctx, req.id, "otp_email"),
    addOTPSMS: (req, ctx) => details(onUser(ctx, req.id, (tx) => addOtp(tx, actorOf(ctx), req.id, "otp_sms"))),
    removeOTPSMS: (req, ctx) => remove(ctx, req.id, "otp_sms"),
    async generateRecoveryCodes(req, ctx) {
      const generated = await onUser(ctx, req.id, (tx) => generateRecoveryCodes(tx, actorOf(ctx), box, req.id));
      return { details: detailsToProto(generated.details), codes: generated.codes };
    },
    removeRecoveryCodes: (req, ctx) => details(onUser(ctx, req.id, (tx) => removeRecoveryCodes(tx, actorOf(ctx), req.id))),
    async listAuthMethods(req, ctx) {
      const db = read(ctx);
      const user = await getUserRow(db, tenantOf(ctx).id, req.id);
      return { authMethodTypes: (await authMethodsOf(db, user)).map((m) => METHOD_TYPES[m]) };
    },
  };
}
