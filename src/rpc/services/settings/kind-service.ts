import type { DescMessage, Message } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { Details } from "../../../../gen/platform/settings/object/v3alpha/object_pb.js";
import type { ContextRef } from "../../../domain/context.js";
import type { Resolved, SettingsKind } from "../../../domain/settings/kind.js";
import { resolveSettings, writeSettings } from "../../../domain/settings/rows.js";
import type { Db, Tx } from "../../../store/db.js";
import { askedContext, editorOf } from "../../context.js";
import { changeFromProto, resolvedToProto, settingsDetailsToProto } from "./codec.js";

/** How a settings service reaches the database (rpc/services/writes.ts): plain writes, or writes that change access. */
export interface SettingsStore {
  database(ctx: HandlerContext): { db: Db };
  write<T>(ctx: HandlerContext, fn: (tx: Tx) => Promise<T>): Promise<T>;
}

/**
 * The two calls every settings service of one kind makes, in the context the request asks
 * for: set (and reset) the properties a Set message names, and resolve them all with where
 * each comes from. Services differ in their kind, their messages and how they write.
 */
export function kindService<SetDesc extends DescMessage, ResolvedDesc extends DescMessage>(
  store: SettingsStore,
  kind: SettingsKind,
  set: SetDesc,
  resolved: ResolvedDesc,
) {
  const write = <T>(settings: Message, ctx: HandlerContext, then: (tx: Tx, at: ContextRef) => Promise<T>) => {
    const change = changeFromProto(set, settings, kind);
    const at = askedContext(ctx.values);
    return store.write(ctx, async (tx) => ({
      details: settingsDetailsToProto(await writeSettings(tx, editorOf(ctx), kind, at, change)),
      then: await then(tx, at),
    }));
  };
  return {
    async set(settings: Message, ctx: HandlerContext) {
      return { details: (await write(settings, ctx, async () => undefined)).details };
    },
    /** set, also answering the settings in effect in the context after the change (for what they lack). */
    async setAndResolve(settings: Message, ctx: HandlerContext): Promise<{ details: Details; resolved: Resolved }> {
      const { details, then } = await write(settings, ctx, async (tx, at) => (await resolveSettings(tx, kind, at)).resolved);
      return { details, resolved: then };
    },
    async resolve(ctx: HandlerContext) {
      const at = askedContext(ctx.values);
      const found = await resolveSettings(store.database(ctx).db, kind, at);
      return { details: settingsDetailsToProto(found.details), settings: resolvedToProto(resolved, found.resolved, at) };
    },
  };
}
