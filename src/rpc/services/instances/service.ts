import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  GetInstanceSchema,
  InstanceFieldName,
  InstanceState,
  type InstanceSearchFilter,
  type PasswordPolicy as PasswordPolicyProto,
} from "../../../../gen/platform/resources/instance/v3alpha/instance_pb.js";
import { PlatformInstances } from "../../../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import type { PasswordHasher } from "../../../crypto/passwords.js";
import type { SigningKeys } from "../../../oidc/models/signing-keys.js";
import { isSystemMember } from "../../../domain/authz/principal.js";
import type { Actor } from "../../../domain/details.js";
import {
  addInstance,
  addInstanceDomain,
  limitInstances,
  patchInstance,
  removeInstance,
  removeInstanceDomain,
  setPrimaryInstanceDomain,
} from "../../../domain/instance/commands.js";
import { getInstance, searchInstances, type InstanceFilter, type InstanceSortColumn, type InstanceView } from "../../../domain/instance/queries.js";
import { addMembership } from "../../../domain/membership/commands.js";
import { addPersonalAccessToken } from "../../../domain/pat/commands.js";
import { addUser } from "../../../domain/user/commands.js";
import { DEFAULT_PASSWORD_POLICY, type PasswordPolicy } from "../../../domain/user/password-policy.js";
import { hashNewPassword } from "../../../domain/user/passwords.js";
import type { Store } from "../../../store/database.js";
import { page } from "../../../store/search.js";
import { editorOf, principalOf, tenantOf } from "../../context.js";
import { detailsToProto, durationToMs, msToDuration, searchResult, textMatchFromProto } from "../convert.js";
import { userSpecFromProto } from "../users/convert.js";
import { handlerStore } from "../writes.js";

function policyFromProto(p: PasswordPolicyProto): PasswordPolicy {
  return {
    minLength: p.minLength,
    requireUppercase: p.requireUppercase,
    requireLowercase: p.requireLowercase,
    requireNumber: p.requireNumber,
    requireSymbol: p.requireSymbol,
  };
}

function instanceToProto(view: InstanceView) {
  return create(GetInstanceSchema, {
    details: detailsToProto(view.details),
    name: view.name,
    state: view.blocked ? InstanceState.BLOCKED : InstanceState.ACTIVE,
    domains: view.domains.map((d) => ({ domain: d.domain, isPrimary: d.isPrimary, creationDate: timestampFromDate(d.createdAt) })),
    defaultOrgId: view.defaultOrgId,
    defaultLanguage: view.defaultLanguage,
    passwordPolicy: view.passwordPolicy,
    ...(view.auditLogRetentionMs !== null && { auditLogRetention: msToDuration(view.auditLogRetentionMs) }),
  });
}

function filterFromProto({ filter }: InstanceSearchFilter): InstanceFilter {
  switch (filter.case) {
    case "inIds":
      return { ids: filter.value.ids };
    case "name":
    case "domain":
      return { [filter.case]: { value: filter.value.value, match: textMatchFromProto(filter.value.method) } } as InstanceFilter;
    case "state":
      return { blocked: filter.value.state === InstanceState.BLOCKED };
    default:
      // Validation requires exactly one filter.
      throw new Error("instance filter without a case");
  }
}

const SORT: Record<InstanceFieldName, InstanceSortColumn> = {
  [InstanceFieldName.UNSPECIFIED]: "created_at",
  [InstanceFieldName.ID]: "id",
  [InstanceFieldName.CREATION_DATE]: "created_at",
  [InstanceFieldName.CHANGE_DATE]: "change_date",
  [InstanceFieldName.NAME]: "name",
};

/** Limits as the domain takes them: a zero retention removes the limit. */
function limitsFromProto(l: { block?: boolean; auditLogRetention?: Parameters<typeof durationToMs>[0] }) {
  const retention = l.auditLogRetention && durationToMs(l.auditLogRetention);
  return {
    ...(l.block !== undefined && { block: l.block }),
    ...(retention !== undefined && { auditLogRetentionMs: retention === 0 ? null : retention }),
  };
}

/** Translates between the API and the domain; the rules live in domain/instance. */
export function instancesService({
  store,
  access,
  hasher,
  signingKeys,
}: {
  store: Pick<Store, "forRequest">;
  access: AccessEpoch;
  hasher: PasswordHasher;
  signingKeys: SigningKeys;
}): ServiceImpl<typeof PlatformInstances> {
  const { changingAccess, database, write } = handlerStore(store, access);
  /** Commands on the instance a request names, as the calling user. */
  const on = (ctx: HandlerContext, instanceId: string): Actor => ({ instanceId, ...editorOf(ctx) });
  return {
    async createInstance(req, ctx) {
      const input = req.instance!;
      const policy = input.passwordPolicy ? policyFromProto(input.passwordPolicy) : DEFAULT_PASSWORD_POLICY;
      const admin = await userSpecFromProto(input.admin!.user!, (password) => hashNewPassword(hasher, password, policy));
      const patExpiration = input.admin!.patExpirationDate && timestampDate(input.admin!.patExpirationDate);
      const principal = principalOf(ctx);
      const created = await changingAccess(ctx, async (tx) => {
        const instance = await addInstance(
          tx,
          {
            name: input.name,
            domains: input.domains,
            defaultOrgName: input.firstOrgName,
            ...(input.defaultLanguage && { defaultLanguage: input.defaultLanguage }),
            ...(input.passwordPolicy && { passwordPolicy: policy }),
          },
          editorOf(ctx),
        );
        const actor = on(ctx, instance.instanceId);
        const user = await addUser(tx, actor, instance.orgId, admin);
        await addMembership(tx, actor, { userId: user.id, contextType: "instance", contextId: instance.instanceId, roles: ["IAM_OWNER"] }, principal);
        const pat = patExpiration && (await addPersonalAccessToken(tx, actor, { userId: user.id, expiresAt: patExpiration }));
        return { ...instance, adminUserId: user.id, pat: pat ? pat.token : "" };
      });
      return { details: detailsToProto(created.details), orgId: created.orgId, adminUserId: created.adminUserId, adminPat: created.pat };
    },
    async getInstance(req, ctx) {
      return { instance: instanceToProto(await getInstance(database(ctx).db, req.id)) };
    },
    async searchInstances(req, ctx) {
      const p = page(req.query);
      const found = await searchInstances(database(ctx).db, {
        filters: req.filters.map(filterFromProto),
        sort: SORT[req.sortingColumn],
        page: p,
        ...(!isSystemMember(principalOf(ctx)) && { only: tenantOf(ctx).id }),
      });
      return { ...searchResult(found, p, instanceToProto), sortingColumn: req.sortingColumn };
    },
    async patchInstance(req, ctx) {
      const patch = req.instance!;
      const details = await write(ctx, (tx) =>
        patchInstance(tx, on(ctx, req.id), req.id, {
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.defaultLanguage !== undefined && { defaultLanguage: patch.defaultLanguage }),
          ...(patch.passwordPolicy && { passwordPolicy: policyFromProto(patch.passwordPolicy) }),
        }),
      );
      return { details: detailsToProto(details) };
    },
    async deleteInstance(req, ctx) {
      const details = await changingAccess(ctx, (tx) => removeInstance(tx, { ...on(ctx, req.id), ownInstanceId: principalOf(ctx).instanceId }, req.id));
      return { details: detailsToProto(details) };
    },
    async addInstanceDomain(req, ctx) {
      return { details: detailsToProto(await changingAccess(ctx, (tx) => addInstanceDomain(tx, on(ctx, req.id), req.id, req.domain!.domain))) };
    },
    async removeInstanceDomain(req, ctx) {
      return { details: detailsToProto(await changingAccess(ctx, (tx) => removeInstanceDomain(tx, on(ctx, req.id), req.id, req.domain))) };
    },
    async setPrimaryInstanceDomain(req, ctx) {
      return { details: detailsToProto(await changingAccess(ctx, (tx) => setPrimaryInstanceDomain(tx, on(ctx, req.id), req.id, req.domain))) };
    },
    async limit(req, ctx) {
      const [details] = await changingAccess(ctx, (tx) => limitInstances(tx, on(ctx, req.id), [req.id], limitsFromProto(req.limits!)));
      return { details: detailsToProto(details!) };
    },
    async rotateKeys(req) {
      const { latest } = await signingKeys.rotate(req.id);
      return { keyId: latest.kid, activationDate: timestampFromDate(latest.activatesAt) };
    },
    async bulkLimit(req, ctx) {
      const { instanceIds, ...limits } = req.limits!;
      const details = await changingAccess(ctx, (tx) => limitInstances(tx, on(ctx, tenantOf(ctx).id), instanceIds, limitsFromProto(limits)));
      return { details: details.map(detailsToProto) };
    },
  };
}
