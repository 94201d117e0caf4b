import { appendAndProject } from "../../store/append.js";
import type { Db, Tx } from "../../store/db.js";
import type { Editor } from "../../store/editor.js";
import { prepared } from "../../store/prepared.js";
import type { SettingsTable } from "../../store/schema.js";
import type { Selectable } from "kysely";
import { SYSTEM_CONTEXT, contextColumns, describeContext, lineage, ownerOfContext, sameContext, type ContextRef } from "../context.js";
import type { Owner } from "../details.js";
import { invalidArgument } from "../errors.js";
import type { Resolved, SettingsChange, SettingsKind } from "./kind.js";

/** Settings Details: the last change in one context, and that context. */
export interface SettingsDetails {
  sequence: number;
  changeDate: Date | undefined;
  owner: Owner;
}

type Row = Selectable<SettingsTable>;

/**
 * The rows of one context's lineage (organization, instance, system: three at most), the
 * read of every Resolve call: prepared once (store/prepared.ts); a shorter lineage repeats
 * its last context.
 */
const rowsOfLineage = prepared((db, p: { kind: string; i1: string; o1: string; i2: string; o2: string; i3: string; o3: string }) =>
  db
    .selectFrom("settings")
    .selectAll()
    .where("kind", "=", p.kind)
    .where((eb) =>
      eb.or([
        eb.and([eb("instance_id", "=", p.i1), eb("org_id", "=", p.o1)]),
        eb.and([eb("instance_id", "=", p.i2), eb("org_id", "=", p.o2)]),
        eb.and([eb("instance_id", "=", p.i3), eb("org_id", "=", p.o3)]),
      ]),
    ),
);

/** The rows of some contexts and their ancestors: one query, whatever the depth and count. */
async function rowsAlong(db: Db | Tx, kind: string, contexts: ContextRef[]): Promise<Row[]> {
  const keys = new Map(contexts.flatMap(lineage).map((c) => [key(contextColumns(c)), contextColumns(c)]));
  if (keys.size <= 3) {
    const chain = [...keys.values()];
    const [a, b, c] = [0, 1, 2].map((i) => chain[Math.min(i, chain.length - 1)]!);
    return rowsOfLineage(db, { kind, i1: a!.instance_id, o1: a!.org_id, i2: b!.instance_id, o2: b!.org_id, i3: c!.instance_id, o3: c!.org_id });
  }
  return db
    .selectFrom("settings")
    .selectAll()
    .where("kind", "=", kind)
    .where((eb) => eb.or([...keys.values()].map((c) => eb.and([eb("instance_id", "=", c.instance_id), eb("org_id", "=", c.org_id)]))))
    .execute();
}

function key(c: { instance_id: string; org_id: string }): string {
  return `${c.instance_id}/${c.org_id}`;
}

function detailsOf(row: Row | undefined, at: ContextRef): SettingsDetails {
  return { sequence: row?.sequence ?? 0, changeDate: row?.change_date, owner: ownerOfContext(at) };
}

export interface ResolvedSettings {
  resolved: Resolved;
  /** The last change in the context asked (sequence 0 when it sets nothing). */
  details: SettingsDetails;
}

/** Per property, the nearest value along the context and its ancestors, else the built-in default. */
export async function resolveSettings(db: Db | Tx, kind: SettingsKind, at: ContextRef): Promise<ResolvedSettings> {
  return (await resolveSettingsIn(db, kind, [at]))[0]!;
}

/**
 * resolveSettings for several contexts at once (a page of instances), in one query.
 * `adjusted: false` gives the values as set, before the kind repairs combinations a
 * parent broke: what a write's rules must judge.
 */
export async function resolveSettingsIn(db: Db | Tx, kind: SettingsKind, contexts: ContextRef[], { adjusted = true } = {}): Promise<ResolvedSettings[]> {
  if (contexts.length === 0) return [];
  const rows = new Map((await rowsAlong(db, kind.name, contexts)).map((r) => [key(r), r]));
  const rowAt = (c: ContextRef) => rows.get(key(contextColumns(c)));
  return contexts.map((at) => {
    const resolved = resolveAlong(kind, at, (c) => rowAt(c)?.properties);
    return { resolved: adjusted && kind.adjust ? kind.adjust(resolved) : resolved, details: detailsOf(rowAt(at), at) };
  });
}

/** Per property, the nearest value along the context and its ancestors (`propertiesAt` gives what each sets), else the built-in default. */
function resolveAlong(kind: SettingsKind, at: ContextRef, propertiesAt: (c: ContextRef) => Record<string, unknown> | undefined): Resolved {
  const chain = lineage(at);
  const resolved: Resolved = {};
  for (const [name, property] of Object.entries(kind.properties)) {
    const from = chain.find((c) => Object.hasOwn(propertiesAt(c) ?? {}, name));
    resolved[name] = from
      ? { value: propertiesAt(from)![name], from }
      : { value: property.builtIn, from: SYSTEM_CONTEXT, ...(property.levels.size === 0 && { fixed: true }) };
  }
  return resolved;
}

/**
 * The settings in effect at `at` as if `change` were written there, refused as the write
 * would refuse it; nothing is stored (previews of unsaved values).
 */
export async function previewSettings(db: Db | Tx, kind: SettingsKind, at: ContextRef, change: SettingsChange): Promise<Resolved> {
  checkChange(kind, at, change);
  const rows = new Map((await rowsAlong(db, kind.name, [at])).map((r) => [key(r), r.properties]));
  const own = key(contextColumns(at));
  const changed: Record<string, unknown> = { ...rows.get(own) };
  for (const name of change.reset) delete changed[name];
  rows.set(own, Object.assign(changed, change.set));
  const resolved = resolveAlong(kind, at, (c) => rows.get(key(contextColumns(c))));
  kind.checkResolved?.(resolved, at);
  return kind.adjust ? kind.adjust(resolved) : resolved;
}

/** A change's properties may be set in the context, and its values are valid (InvalidArgument). */
function checkChange(kind: SettingsKind, at: ContextRef, change: SettingsChange): void {
  for (const name of [...Object.keys(change.set), ...change.reset]) {
    const property = kind.properties[name];
    if (!property) throw invalidArgument(`${kind.name} settings have no property ${name}`);
    if (!property.levels.has(at.type)) {
      throw invalidArgument(
        `${name} cannot be set in ${describeContext(at)}; it may be set in: ${[...property.levels].join(", ") || "nowhere (fixed by the system)"}`,
      );
    }
  }
  for (const [name, value] of Object.entries(change.set)) kind.properties[name]!.check?.(value);
}

/**
 * Where a resolved value comes from, as the API says it: nothing when from the context asked,
 * except for values fixed by the system (the supported languages), which always name it.
 */
export function ownerFor(value: { from: ContextRef; fixed?: boolean }, at: ContextRef): Owner | undefined {
  return sameContext(value.from, at) && !value.fixed ? undefined : ownerOfContext(value.from);
}

/**
 * Sets and resets properties in one context. A change that changes nothing succeeds
 * without an event. The kind's rules see the effective values after the change, in the
 * same transaction: a refused change leaves nothing behind.
 */
export async function writeSettings(
  tx: Tx,
  creator: Editor,
  kind: SettingsKind,
  at: ContextRef,
  change: SettingsChange,
): Promise<SettingsDetails & { changed: boolean }> {
  checkChange(kind, at, change);
  const columns = contextColumns(at);
  // The row is the lock: concurrent writers of one context's settings take turns.
  await tx
    .insertInto("settings")
    .values({ ...columns, kind: kind.name, properties: "{}", change_date: new Date(), sequence: 0 })
    .onConflict((oc) => oc.columns(["instance_id", "org_id", "kind"]).doNothing())
    .execute();
  const row = await tx
    .selectFrom("settings")
    .selectAll()
    .where("instance_id", "=", columns.instance_id)
    .where("org_id", "=", columns.org_id)
    .where("kind", "=", kind.name)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const properties: Record<string, unknown> = { ...row.properties };
  for (const name of change.reset) delete properties[name];
  Object.assign(properties, change.set);
  if (JSON.stringify(sorted(properties)) === JSON.stringify(sorted(row.properties))) {
    // The row was made just now to lock: the context still sets nothing and has no change date.
    if (row.sequence === 0) {
      await deleteRow(tx, kind.name, at);
      return { ...detailsOf(undefined, at), changed: false };
    }
    return { ...detailsOf(row, at), changed: false };
  }
  const appended = await appendAndProject(
    tx,
    { instanceId: columns.instance_id, type: `settings.${kind.name}`, id: columns.org_id || columns.instance_id || "system", orgId: columns.org_id },
    row.sequence,
    [{ type: `settings.${kind.name}.set`, payload: change }],
    creator,
    { table: "settings", key: { instance_id: columns.instance_id, org_id: columns.org_id, kind: kind.name }, set: { properties: JSON.stringify(properties) } },
  );
  if (kind.checkResolved) kind.checkResolved((await resolveSettingsIn(tx, kind, [at], { adjusted: false }))[0]!.resolved, at);
  return { sequence: appended.sequence, changeDate: appended.createdAt, owner: ownerOfContext(at), changed: true };
}

function deleteRow(tx: Tx, kind: string, at: ContextRef) {
  const columns = contextColumns(at);
  return tx.deleteFrom("settings").where("instance_id", "=", columns.instance_id).where("org_id", "=", columns.org_id).where("kind", "=", kind).execute();
}

function sorted(o: Record<string, unknown>): [string, unknown][] {
  return Object.entries(o).sort(([a], [b]) => a.localeCompare(b));
}

/** Part of removing an organization: every kind of settings it sets, and their files. */
export async function removeContextSettings(tx: Tx, at: ContextRef): Promise<void> {
  const columns = contextColumns(at);
  await tx.deleteFrom("settings_files").where("instance_id", "=", columns.instance_id).where("org_id", "=", columns.org_id).execute();
  await tx.deleteFrom("settings").where("instance_id", "=", columns.instance_id).where("org_id", "=", columns.org_id).execute();
}
