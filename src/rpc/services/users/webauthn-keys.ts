import type { JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { PasskeyAuthenticator, PasskeyState, U2FState } from "../../../../gen/platform/resources/user/v3alpha/credential_pb.js";
import type { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { instanceName } from "../../../domain/instance/queries.js";
import { webAuthnKeysOf } from "../../../domain/user-webauthn/queries.js";
import { finishRegistration, removeWebAuthnKey, startRegistration, type Attachment } from "../../../domain/user-webauthn/registration.js";
import { getUserRow } from "../../../domain/user/queries.js";
import type { Db, Tx } from "../../../store/db.js";
import type { WebAuthnKind } from "../../../domain/user-webauthn/factor.js";
import { actorOf, tenantOf } from "../../context.js";
import { detailsToProto } from "../convert.js";
import { keepOneFor } from "./factors.js";

type Users = ServiceImpl<typeof PlatformUsers>;
type KeyMethods = Pick<
  Users,
  | "startPasskeyRegistration"
  | "finishPasskeyRegistration"
  | "listPasskeys"
  | "removePasskey"
  | "startU2FRegistration"
  | "finishU2FRegistration"
  | "listU2F"
  | "removeU2F"
>;
type Deps = { onUser: <T>(ctx: HandlerContext, userId: string, fn: (tx: Tx) => Promise<T>) => Promise<T>; read: (ctx: HandlerContext) => Db };

const ATTACHMENT: Record<PasskeyAuthenticator, Attachment> = {
  [PasskeyAuthenticator.UNSPECIFIED]: undefined,
  [PasskeyAuthenticator.PLATFORM]: "platform",
  [PasskeyAuthenticator.CROSS_PLATFORM]: "cross-platform",
};

/**
 * The four calls of one kind of WebAuthn credential (domain/user-webauthn: one implementation
 * for passkeys and security keys); the messages differ only in the name of the key's id.
 */
function keyCalls(kind: WebAuthnKind, { onUser, read }: Deps) {
  return {
    async start(ctx: HandlerContext, userId: string, domain: string, attachment: Attachment) {
      const started = await onUser(ctx, userId, async (tx) => {
        // The name people see in their authenticator: the instance's.
        const rpName = await instanceName(tx, tenantOf(ctx).id);
        return startRegistration(tx, actorOf(ctx), userId, kind, { domain, rpName, attachment });
      });
      // As JSON: a Struct cannot hold the undefined keys the library may leave (its JSON form fails).
      return { details: detailsToProto(started.details), id: started.id, options: JSON.parse(JSON.stringify(started.options)) as JsonObject };
    },
    async finish(ctx: HandlerContext, userId: string, id: string, credential: JsonObject | undefined, name: string) {
      const response = credential as unknown as RegistrationResponseJSON;
      return { details: detailsToProto(await onUser(ctx, userId, (tx) => finishRegistration(tx, actorOf(ctx), userId, kind, id, response, name))) };
    },
    async list(ctx: HandlerContext, userId: string) {
      const db = read(ctx);
      const user = await getUserRow(db, tenantOf(ctx).id, userId);
      return (await webAuthnKeysOf(db, user.instance_id, user.id, kind)).map((k) => ({
        id: k.id,
        name: k.name,
        ready: k.state === "ready",
        domain: k.rpId,
        creationDate: timestampFromDate(k.createdAt),
      }));
    },
    async remove(ctx: HandlerContext, userId: string, id: string) {
      return {
        details: detailsToProto(
          await onUser(ctx, userId, async (tx) => removeWebAuthnKey(tx, actorOf(ctx), userId, kind, id, await keepOneFor(ctx, tx, userId))),
        ),
      };
    },
  };
}

/** The passkeys and security keys of PlatformUsers; `onUser` and `read` as in factors.ts. */
export function webAuthnKeyMethods(deps: Deps): KeyMethods {
  const passkeys = keyCalls("passkey", deps);
  const u2f = keyCalls("u2f", deps);
  return {
    async startPasskeyRegistration(req, ctx) {
      const { details, id, options } = await passkeys.start(ctx, req.id, req.domain, ATTACHMENT[req.authenticatorType]);
      return { details, passkeyId: id, publicKeyCredentialCreationOptions: options };
    },
    finishPasskeyRegistration: (req, ctx) => passkeys.finish(ctx, req.id, req.passkeyId, req.publicKeyCredential, req.name),
    async listPasskeys(req, ctx) {
      const keys = await passkeys.list(ctx, req.id);
      return { result: keys.map(({ ready, ...k }) => ({ ...k, state: ready ? PasskeyState.READY : PasskeyState.PENDING })) };
    },
    removePasskey: (req, ctx) => passkeys.remove(ctx, req.id, req.passkeyId),
    async startU2FRegistration(req, ctx) {
      // A security key of any kind: the browser offers what the person has.
      const { details, id, options } = await u2f.start(ctx, req.id, req.domain, undefined);
      return { details, u2fId: id, publicKeyCredentialCreationOptions: options };
    },
    finishU2FRegistration: (req, ctx) => u2f.finish(ctx, req.id, req.u2fId, req.publicKeyCredential, req.name),
    async listU2F(req, ctx) {
      const keys = await u2f.list(ctx, req.id);
      return { result: keys.map(({ ready, ...k }) => ({ ...k, state: ready ? U2FState.U2F_STATE_READY : U2FState.U2F_STATE_PENDING })) };
    },
    removeU2F: (req, ctx) => u2f.remove(ctx, req.id, req.u2fId),
  };
}
