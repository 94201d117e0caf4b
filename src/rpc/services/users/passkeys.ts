import type { JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { PasskeyAuthenticator, PasskeyState } from "../../../../gen/platform/resources/user/v3alpha/credential_pb.js";
import type { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { instanceName } from "../../../domain/instance/queries.js";
import { webAuthnKeysOf } from "../../../domain/user-webauthn/queries.js";
import { finishRegistration, removeWebAuthnKey, startRegistration, type Attachment } from "../../../domain/user-webauthn/registration.js";
import { getUserRow } from "../../../domain/user/queries.js";
import type { Db, Tx } from "../../../store/eventstore.js";
import { actorOf, tenantOf } from "../../context.js";
import { detailsToProto } from "../convert.js";

type PasskeyMethods = Pick<ServiceImpl<typeof PlatformUsers>, "startPasskeyRegistration" | "finishPasskeyRegistration" | "listPasskeys" | "removePasskey">;

const ATTACHMENT: Record<PasskeyAuthenticator, Attachment> = {
  [PasskeyAuthenticator.UNSPECIFIED]: undefined,
  [PasskeyAuthenticator.PLATFORM]: "platform",
  [PasskeyAuthenticator.CROSS_PLATFORM]: "cross-platform",
};

/** The passkeys of PlatformUsers (domain/user-webauthn); `onUser` and `read` as in factors.ts. */
export function passkeyMethods(deps: { onUser: <T>(ctx: HandlerContext, userId: string, fn: (tx: Tx) => Promise<T>) => Promise<T>; read: (ctx: HandlerContext) => Db }): PasskeyMethods {
  const { onUser, read } = deps;
  return {
    async startPasskeyRegistration(req, ctx) {
      const started = await onUser(ctx, req.id, async (tx) => {
        // The name people see in their authenticator: the instance's.
        const rpName = await instanceName(tx, tenantOf(ctx).id);
        return startRegistration(tx, actorOf(ctx), req.id, "passkey", { domain: req.domain, rpName, attachment: ATTACHMENT[req.authenticatorType] });
      });
      // As JSON: a Struct cannot hold the undefined keys the library may leave (its JSON form fails).
      return { details: detailsToProto(started.details), passkeyId: started.id, publicKeyCredentialCreationOptions: JSON.parse(JSON.stringify(started.options)) as JsonObject };
    },
    async finishPasskeyRegistration(req, ctx) {
      const response = req.publicKeyCredential as unknown as RegistrationResponseJSON;
      return { details: detailsToProto(await onUser(ctx, req.id, (tx) => finishRegistration(tx, actorOf(ctx), req.id, "passkey", req.passkeyId, response, req.name))) };
    },
    async listPasskeys(req, ctx) {
      const db = read(ctx);
      const user = await getUserRow(db, tenantOf(ctx).id, req.id);
      const keys = await webAuthnKeysOf(db, user.instance_id, user.id, "passkey");
      return { result: keys.map((k) => ({ id: k.id, name: k.name, state: k.state === "ready" ? PasskeyState.READY : PasskeyState.PENDING, domain: k.rpId, creationDate: timestampFromDate(k.createdAt) })) };
    },
    async removePasskey(req, ctx) {
      return { details: detailsToProto(await onUser(ctx, req.id, (tx) => removeWebAuthnKey(tx, actorOf(ctx), req.id, "passkey", req.passkeyId))) };
    },
  };
}
