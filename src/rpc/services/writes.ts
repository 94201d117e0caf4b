import type { HandlerContext } from "@connectrpc/connect";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import type { Store } from "../../store/database.js";
import type { Tx } from "../../store/eventstore.js";

/**
 * How handlers reach the database: bounded by the call's deadline and disconnect, writes in
 * one transaction, and writes that change who may do what (see cache/access-epoch.ts)
 * advancing the epoch once they committed.
 */
export function handlerStore(store: Pick<Store, "forRequest">, access?: AccessEpoch) {
  const database = (ctx: HandlerContext) => store.forRequest(ctx.signal);
  const write = <T>(ctx: HandlerContext, fn: (tx: Tx) => Promise<T>) => database(ctx).transact(fn);
  const changingAccess = async <T>(ctx: HandlerContext, fn: (tx: Tx) => Promise<T>) => {
    const result = await write(ctx, fn);
    access?.advance();
    return result;
  };
  return { database, write, changingAccess };
}
