import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import type { PasswordHasher } from "../../../crypto/passwords.js";
import { hashToken, newOpaqueToken } from "../../../crypto/tokens.js";
import { invalidArgument, notFound } from "../../../domain/errors.js";
import { addPersonalAccessToken, removePersonalAccessToken } from "../../../domain/pat/commands.js";
import { searchPersonalAccessTokens } from "../../../domain/pat/queries.js";
import { keyFromProto, keyToProto } from "../keys.js";
import { addUserKey, removeUserKey } from "../../../domain/user-key/commands.js";
import { searchUserKeys } from "../../../domain/user-key/queries.js";
import { removeUserMetadata, setUserMetadata } from "../../../domain/user-metadata/commands.js";
import { getUserMetadata, searchUserMetadata } from "../../../domain/user-metadata/queries.js";
import { assertMayManageUsers } from "../../../domain/authz/manage.js";
import { addUser, changeUserState, patchUser, userRowForUpdate, removeUser, setClientSecret, storePassword } from "../../../domain/user/commands.js";
import { checkPassword } from "../../../domain/user/password-policy.js";
import { checkCurrentPassword, hashNewPassword, passwordPolicyOf } from "../../../domain/user/passwords.js";
import { searchExternalAccounts, unlinkExternalAccount } from "../../../domain/user/external-identities.js";
import { getUser, orgOfUser, searchUsers } from "../../../domain/user/queries.js";
import { requestPasswordReset, resendInvite, setPasswordWithCode } from "../../../domain/user/password-reset.js";
import type { VerificationSettings } from "../../../domain/user/code-messages.js";
import { requestVerification, verifyChangedContacts, verifyContact } from "../../../domain/user/verification.js";
import type { Channel } from "../../../domain/notification/kinds.js";
import type { Store } from "../../../store/database.js";
import type { Tx } from "../../../store/db.js";
import { page } from "../../../store/search.js";
import { actingOrg, actorOf, principalOf, selfOnlyKey, tenantOf, visibleOrgs } from "../../context.js";
import { handlerStore } from "../writes.js";
import { detailsToProto, searchResult } from "../convert.js";
import { factorMethods } from "./factors.js";
import { webAuthnKeyMethods } from "./webauthn-keys.js";
import { userFilterFromProto, userPatchFromProto, userSortFromProto, userSpecFromProto, userToProto } from "./convert.js";

export interface UsersDeps {
  store: Pick<Store, "forRequest">;
  access: AccessEpoch;
  hasher: PasswordHasher;
  /** Codes for email addresses and phone numbers, and their messages (domain/user/verification.ts). */
  verification: VerificationSettings;
}

/** Translates between the API and the domain; the rules live in domain/user and its credential modules. */
export function usersService({ store, access, hasher, verification }: UsersDeps): ServiceImpl<typeof PlatformUsers> {
  const { changingAccess, database, write } = handlerStore(store, access);
  const details = async (pending: Promise<Parameters<typeof detailsToProto>[0]>) => ({ details: detailsToProto(await pending) });
  /** The user a credential listing is about, with its organization (the owner of its credentials). */
  const userRef = async (ctx: HandlerContext, id: string) => {
    const orgId = await orgOfUser(database(ctx).db, tenantOf(ctx).id, id);
    if (orgId === undefined) throw notFound(`user ${id} not found`);
    return { id, orgId };
  };

  /**
   * Writes on one user: locked first, and refused when it holds roles the caller could not
   * grant. `endsAccess`: the write changes who may do what, either way (a user let back in, a
   * token created: cached misses must not hide them), or what a machine user is as an OAuth
   * client (secret, keys, username; cached in oidc/helpers/lookups.ts).
   */
  const onUser = <T>(ctx: HandlerContext, userId: string, fn: (tx: Tx) => Promise<T>, endsAccess = false) =>
    (endsAccess ? changingAccess : write)(ctx, async (tx) => {
      const instanceId = tenantOf(ctx).id;
      await userRowForUpdate(tx, instanceId, userId);
      await assertMayManageUsers(tx, instanceId, principalOf(ctx), { userId });
      return fn(tx);
    });

  /** A contact verified by its code; one answer for every kind of wrong code (no oracle), after the failed try is committed. */
  const verify = async (ctx: HandlerContext, userId: string, channel: Channel, code: string) => {
    const verified = await onUser(ctx, userId, (tx) => verifyContact(tx, actorOf(ctx), verification, userId, channel, code));
    if (!verified) throw invalidArgument("the code is not valid");
    return { details: detailsToProto(verified) };
  };
  const resend = async (ctx: HandlerContext, userId: string, channel: Channel, returnCode: boolean) => {
    const issued = await onUser(ctx, userId, (tx) => requestVerification(tx, actorOf(ctx), verification, userId, channel, returnCode));
    return { details: detailsToProto(issued.details), ...(issued.code && { code: issued.code }) };
  };

  return {
    ...factorMethods({ box: verification.box, onUser: (ctx, userId, fn) => onUser(ctx, userId, fn), read: (ctx) => database(ctx).db }),
    ...webAuthnKeyMethods({ onUser: (ctx, userId, fn) => onUser(ctx, userId, fn), read: (ctx) => database(ctx).db }),
    async createUser(req, ctx) {
      const policy = () => passwordPolicyOf(database(ctx).db, tenantOf(ctx).id);
      const spec = await userSpecFromProto(req.user!, async (password) => hashNewPassword(hasher, password, await policy()));
      const orgId = actingOrg(ctx);
      const { created, codes } = await write(ctx, async (tx) => {
        const created = await addUser(tx, actorOf(ctx), orgId, spec);
        const { type } = spec;
        if (type.kind !== "human") return { created, codes: {} };
        // A person without a password is invited instead: accepting sets one and verifies the email.
        const invited = type.passwordHash === undefined;
        const unverified = { email: !type.email.verified, phone: type.phone?.verified === false, invite: invited };
        return { created, codes: await verifyChangedContacts(tx, actorOf(ctx), verification, created.id, unverified, req.returnCode) };
      });
      return { details: detailsToProto(created.details), ...codes };
    },
    async getUser(req, ctx) {
      const reader = ctx.values.get(selfOnlyKey) ? "self" : "owner";
      return { user: userToProto(await getUser(database(ctx).db, tenantOf(ctx).id, req.id, reader)) };
    },
    async searchUsers(req, ctx) {
      const p = page(req.query);
      const found = await searchUsers(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(userFilterFromProto),
        sort: userSortFromProto(req.sortingColumn),
        page: p,
        within: visibleOrgs(ctx),
      });
      return { ...searchResult(found, p, userToProto), sortingColumn: req.sortingColumn };
    },
    async patchUser(req, ctx) {
      const patch = userPatchFromProto(req.user!);
      // A machine user's username and token type are cached with it as an OAuth client (oidc/helpers/lookups.ts).
      const { changed, codes } = await onUser(
        ctx,
        req.id,
        async (tx) => {
          const before = await userRowForUpdate(tx, tenantOf(ctx).id, req.id);
          const changed = await patchUser(tx, actorOf(ctx), req.id, patch, ctx.values.get(selfOnlyKey) ? "self" : "owner");
          // A code only for an address or number the patch changed (or made unverified).
          const { email, phone } = patch.human ?? {};
          const contacts = {
            email: email !== undefined && (email.address !== before.email || (before.email_verified === true && !email.verified)),
            phone: phone !== undefined && (phone.number !== before.phone || (before.phone_verified === true && !phone.verified)),
          };
          return { changed, codes: await verifyChangedContacts(tx, actorOf(ctx), verification, req.id, contacts, req.returnCode) };
        },
        true,
      );
      return { details: detailsToProto(changed), ...codes };
    },
    verifyEmail: (req, ctx) => verify(ctx, req.id, "email", req.verification!.code),
    verifyPhone: (req, ctx) => verify(ctx, req.id, "sms", req.verification!.code),
    resendEmailCode: (req, ctx) => resend(ctx, req.id, "email", req.returnCode),
    resendPhoneCode: (req, ctx) => resend(ctx, req.id, "sms", req.returnCode),
    deleteUser(req, ctx) {
      return details(onUser(ctx, req.id, (tx) => removeUser(tx, actorOf(ctx), req.id), true));
    },
    async setPassword(req, ctx) {
      const { newPassword, currentPassword, changeRequired, verificationCode } = req.password!;
      const selfOnly = ctx.values.get(selfOnlyKey);
      if (selfOnly && !currentPassword && !verificationCode)
        throw invalidArgument("current_password (or a verification_code) is required to change your own password");
      if (selfOnly && changeRequired) throw invalidArgument("change_required is for administrators: users cannot require it of themselves");
      const actor = actorOf(ctx);
      // The policy first: a refused new password leaves everything as it was.
      const policy = await passwordPolicyOf(database(ctx).db, actor.instanceId);
      checkPassword(newPassword, policy);
      let expected: string | undefined;
      if (currentPassword) {
        const checked = await checkCurrentPassword(database(ctx).db, hasher, actor.instanceId, req.id, currentPassword);
        if (!checked.ok) throw invalidArgument("current_password is not the user's password");
        expected = checked.hash;
      }
      const hash = await hasher.hash(newPassword);
      if (verificationCode) {
        if (changeRequired) throw invalidArgument("change_required cannot be set with a verification_code: the person chose this password");
        const set = await onUser(ctx, req.id, (tx) => setPasswordWithCode(tx, actor, verification, req.id, verificationCode, hash));
        if (!set) throw invalidArgument("the code is not valid");
        return { details: detailsToProto(set) };
      }
      return details(onUser(ctx, req.id, (tx) => storePassword(tx, actor, req.id, { hash, changeRequired, expected })));
    },
    async resetPassword(req, ctx) {
      const issued = await onUser(ctx, req.id, (tx) => requestPasswordReset(tx, actorOf(ctx), verification, req.id, req.returnCode));
      return { details: detailsToProto(issued.details), ...(issued.code && { code: issued.code }) };
    },
    async resendInvite(req, ctx) {
      const issued = await onUser(ctx, req.id, (tx) => resendInvite(tx, actorOf(ctx), verification, req.id, req.returnCode));
      return { details: detailsToProto(issued.details), ...(issued.code && { code: issued.code }) };
    },
    lockUser(req, ctx) {
      return details(onUser(ctx, req.id, (tx) => changeUserState(tx, actorOf(ctx), req.id, "lock"), true));
    },
    unlockUser(req, ctx) {
      return details(onUser(ctx, req.id, (tx) => changeUserState(tx, actorOf(ctx), req.id, "unlock"), true));
    },
    deactivateUser(req, ctx) {
      return details(onUser(ctx, req.id, (tx) => changeUserState(tx, actorOf(ctx), req.id, "deactivate"), true));
    },
    reactivateUser(req, ctx) {
      return details(onUser(ctx, req.id, (tx) => changeUserState(tx, actorOf(ctx), req.id, "reactivate"), true));
    },
    async addPersonalAccessToken(req, ctx) {
      const expiresAt = timestampDate(req.pat!.expirationDate!);
      // A new token must not meet a cached miss of its own (cache/access-cache.ts).
      const pat = await onUser(ctx, req.id, (tx) => addPersonalAccessToken(tx, actorOf(ctx), { userId: req.id, expiresAt }), true);
      return { details: detailsToProto(pat.details), token: pat.token };
    },
    async searchPersonalAccessTokens(req, ctx) {
      const p = page(req.query);
      const found = await searchPersonalAccessTokens(database(ctx).db, tenantOf(ctx).id, await userRef(ctx, req.id), p);
      return searchResult(found, p, (t) => ({ details: detailsToProto(t.details), expirationDate: timestampFromDate(t.expiresAt) }));
    },
    deletePersonalAccessToken(req, ctx) {
      return details(onUser(ctx, req.id, (tx) => removePersonalAccessToken(tx, actorOf(ctx), req.id, req.patId), true));
    },
    async addKey(req, ctx) {
      const { material, expiresAt } = await keyFromProto(req.key!);
      const added = await onUser(ctx, req.id, (tx) => addUserKey(tx, actorOf(ctx), req.id, material, expiresAt), true);
      return { details: detailsToProto(added.details), keyFile: added.keyFile };
    },
    async searchKeys(req, ctx) {
      const p = page(req.query);
      const found = await searchUserKeys(database(ctx).db, tenantOf(ctx).id, await userRef(ctx, req.id), p);
      return searchResult(found, p, keyToProto);
    },
    deleteKey(req, ctx) {
      return details(onUser(ctx, req.id, (tx) => removeUserKey(tx, actorOf(ctx), req.id, req.keyId), true));
    },
    setMetadata(req, ctx) {
      return details(
        onUser(ctx, req.id, (tx) =>
          setUserMetadata(
            tx,
            actorOf(ctx),
            req.id,
            req.metadata.map(({ key, value }) => ({ key, value })),
          ),
        ),
      );
    },
    async getMetadata(req, ctx) {
      const user = await userRef(ctx, req.id);
      const found = await getUserMetadata(database(ctx).db, tenantOf(ctx).id, user.id, req.key);
      return { metadata: { key: found.key, value: found.value }, changeDate: timestampFromDate(found.changeDate) };
    },
    async searchMetadata(req, ctx) {
      const p = page(req.query);
      const user = await userRef(ctx, req.id);
      const found = await searchUserMetadata(database(ctx).db, tenantOf(ctx).id, user.id, p);
      return searchResult(found, p, (m) => ({ key: m.key, value: m.value }));
    },
    deleteMetadata(req, ctx) {
      return details(onUser(ctx, req.id, (tx) => removeUserMetadata(tx, actorOf(ctx), req.id, req.key)));
    },
    async generateSecret(req, ctx) {
      const secret = newOpaqueToken();
      const changed = await onUser(ctx, req.id, (tx) => setClientSecret(tx, actorOf(ctx), req.id, hashToken(secret)), true);
      return { details: detailsToProto(changed), clientSecret: secret };
    },
    removeSecret(req, ctx) {
      return details(onUser(ctx, req.id, (tx) => setClientSecret(tx, actorOf(ctx), req.id, undefined), true));
    },
    async listIDPLinks(req, ctx) {
      const p = page(req.query);
      const found = await searchExternalAccounts(database(ctx).db, tenantOf(ctx).id, await userRef(ctx, req.id), p);
      return searchResult(found, p, (link) => ({ ...link, details: detailsToProto(link.details) }));
    },
    deleteIDPLink(req, ctx) {
      return details(onUser(ctx, req.id, (tx) => unlinkExternalAccount(tx, actorOf(ctx), req.id, req.idpId, req.externalUserId)));
    },
  };
}
