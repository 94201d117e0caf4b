import type { DescService } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import type { SecretBox } from "../../../crypto/encryption.js";
import type { ObjectDetails } from "../../../domain/details.js";
import { failedPrecondition } from "../../../domain/errors.js";
import { activateProvider, createProvider, deactivateProvider, deleteProvider, patchProvider } from "../../../domain/notification-provider/commands.js";
import type { ProviderFamily, ProviderPatch, ProviderSpec, ProviderView } from "../../../domain/notification-provider/model.js";
import { getProvider, providerRow, searchProviders } from "../../../domain/notification-provider/queries.js";
import { SendFailed } from "../../../engines/notifications/message.js";
import type { ProviderSender } from "../../../engines/notifications/providers/sender.js";
import type { Store } from "../../../store/database.js";
import type { Tx } from "../../../store/db.js";
import { page } from "../../../store/search.js";
import { actorOf, tenantOf } from "../../context.js";
import { detailsToProto, searchResult } from "../convert.js";
import { handlerStore } from "../writes.js";
import { filterFromProto, sortFromProto, type FilterMessage } from "./convert.js";

export interface NotificationProvidersDeps {
  store: Pick<Store, "forRequest">;
  box: SecretBox;
  access: AccessEpoch;
  /** Sends `_test` messages; closes the pooled connections of changed providers. */
  notifications: ProviderSender;
}

/** What a family's service converts; the handlers are the same for both families. */
export interface FamilyCodec<Spec, Patch, Read> {
  family: ProviderFamily;
  spec(provider: Spec): ProviderSpec;
  patch(provider: Patch): ProviderPatch;
  read(view: ProviderView): Read;
}

/** Both families' searches: their filters and sort columns have the same shape. */
interface SearchRequest {
  query?: { offset: bigint; limit: number; asc: boolean };
  sortingColumn: number;
  filters: FilterMessage[];
}

/**
 * The RPCs of PlatformSMTPProviders and PlatformSMSProviders, for one family. Every change
 * that can alter what is sent (all but a create, whose provider is inactive) advances the
 * access epoch, which the senders' cache of active providers follows.
 */
function providerHandlers<Spec, Patch, Read>(codec: FamilyCodec<Spec, Patch, Read>, { store, box, access, notifications }: NotificationProvidersDeps) {
  const { family } = codec;
  const { database, write, changingAccess } = handlerStore(store, access);
  /** A change of a provider: its pooled connections go, as they may carry its old settings. */
  const change = async <T>(ctx: HandlerContext, id: string, fn: (tx: Tx) => Promise<T>) => {
    const result = await changingAccess(ctx, fn);
    notifications.forget(id);
    return result;
  };
  const answer = (details: ObjectDetails) => ({ details: detailsToProto(details) });
  return {
    async create(req: { provider?: Spec }, ctx: HandlerContext) {
      const spec = codec.spec(req.provider!);
      const { details, signingKey } = await write(ctx, (tx) => createProvider(tx, actorOf(ctx), family, spec, box));
      return { ...answer(details), ...(signingKey && { signingKey }) };
    },
    async get(req: { id: string }, ctx: HandlerContext) {
      return { provider: codec.read(await getProvider(database(ctx).db, tenantOf(ctx).id, family, req.id)) };
    },
    async search(req: SearchRequest, ctx: HandlerContext) {
      const p = page(req.query);
      const found = await searchProviders(database(ctx).db, tenantOf(ctx).id, family, {
        filters: req.filters.map(filterFromProto),
        sort: sortFromProto(req.sortingColumn),
        page: p,
      });
      return { ...searchResult(found, p, codec.read), sortingColumn: req.sortingColumn };
    },
    async patch(req: { id: string; provider?: Patch }, ctx: HandlerContext) {
      const patch = codec.patch(req.provider!);
      const { details, signingKey } = await change(ctx, req.id, (tx) => patchProvider(tx, actorOf(ctx), family, req.id, patch, box));
      return { ...answer(details), ...(signingKey && { signingKey }) };
    },
    async delete(req: { id: string }, ctx: HandlerContext) {
      return answer(await change(ctx, req.id, (tx) => deleteProvider(tx, actorOf(ctx), family, req.id)));
    },
    async activate(req: { id: string }, ctx: HandlerContext) {
      return answer(await change(ctx, req.id, (tx) => activateProvider(tx, actorOf(ctx), family, req.id)));
    },
    async deactivate(req: { id: string }, ctx: HandlerContext) {
      return answer(await change(ctx, req.id, (tx) => deactivateProvider(tx, actorOf(ctx), family, req.id)));
    },
    /** The provider's refusal is the caller's to read: FailedPrecondition in its own words. */
    async test(req: { id: string; test?: { receiver: string } }, ctx: HandlerContext) {
      const row = await providerRow(database(ctx).db, tenantOf(ctx).id, family, req.id);
      try {
        await notifications.test(tenantOf(ctx).id, row, req.test!.receiver);
      } catch (error) {
        if (error instanceof SendFailed) throw failedPrecondition(error.message);
        throw error;
      }
      return {};
    },
  };
}

/**
 * A family's service: each RPC is the handler its verb names (`CreateSMTPProvider` → create,
 * `SearchSMSProviders` → search); a verb without one fails at start-up.
 */
export function providersService<S extends DescService, Spec, Patch, Read>(
  service: S,
  codec: FamilyCodec<Spec, Patch, Read>,
  deps: NotificationProvidersDeps,
): ServiceImpl<S> {
  const handlers: Record<string, unknown> = providerHandlers(codec, deps);
  const entries = service.methods.map((method) => {
    const handler = handlers[/^[A-Z][a-z]+/.exec(method.name)![0].toLowerCase()];
    if (!handler) throw new Error(`no handler for ${service.typeName}.${method.name}`);
    return [method.localName, handler];
  });
  return Object.fromEntries(entries) as ServiceImpl<S>;
}
