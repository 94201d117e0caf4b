import type { HandlerContext } from "@connectrpc/connect";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import { noticeAccessChange } from "../../store/access-notice.js";
import type { Store } from "../../store/database.js";
import type { Tx } from "../../store/db.js";
import { holdInstance, instanceGone } from "../../domain/instance/commands.js";
import { tenantKey } from "../context.js";

/**
 * How handlers reach the database: bounded by the call's deadline and disconnect, writes in
 * one transaction that holds the instance they act in (holdInstance: a DeleteInstance racing
 * them leaves nothing behind), and writes that change who may do what (see
 * cache/access-epoch.ts) notifying every process at their commit and advancing this
 * process's epoch after it.
 */
export function handlerStore(store: Pick<Store, "forRequest">, access?: AccessEpoch) {
  const database = (ctx: HandlerContext) => store.forRequest(ctx.signal);
  const write = <T>(ctx: HandlerContext, fn: (tx: Tx) => Promise<T>) => {
    const tenant = ctx.values.get(tenantKey);
    const written = database(ctx).transact(async (tx) => {
      // First of all its locks, so that a concurrent DeleteInstance and this never deadlock.
      if (tenant) await holdInstance(tx, tenant.id);
      return fn(tx);
    });
    return tenant ? written.catch((error: unknown) => Promise.reject(instanceGone(error, tenant.id))) : written;
  };
  const changingAccess = async <T>(ctx: HandlerContext, fn: (tx: Tx) => Promise<T>) => {
    const result = await write(ctx, async (tx) => {
      const done = await fn(tx);
      await noticeAccessChange(tx);
      return done;
    });
    access?.advance();
    return result;
  };
  return { database, write, changingAccess };
}
