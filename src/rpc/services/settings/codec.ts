import { create, type DescMessage, type Message, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LanguageSchema, ResolvedLanguagesSchema, SetLanguagesSchema, type Language, type SetLanguages } from "../../../../gen/platform/settings/language/v3alpha/language_pb.js";
import { SetMessageBodySchema, SetMessageSubjectSchema } from "../../../../gen/platform/settings/message_text/v3alpha/message_text_pb.js";
import {
  DetailsSchema,
  ResolvedBoolSchema,
  ResolvedStringSchema,
  ResolvedUint32Schema,
  SetBoolSchema,
  SetUint32Schema,
  type Details,
} from "../../../../gen/platform/settings/object/v3alpha/object_pb.js";
import type { ContextRef } from "../../../domain/context.js";
import type { Owner } from "../../../domain/details.js";
import type { Resolved, SettingsChange, SettingsKind } from "../../../domain/settings/kind.js";
import { ownerFor, type SettingsDetails } from "../../../domain/settings/store.js";
import { OWNER_TYPES } from "../convert.js";

/**
 * Settings messages are read and written by their fields' types, not per service: a Set
 * message's field named like a property changes it, a Resolved message's field of the same
 * name shows it. A new property is a proto field and a line in its SettingsKind.
 */

const RESET = Symbol("reset");
type Written = { value: unknown } | typeof RESET;

/** A `{set: value} | {reset: true}` oneof. */
const setOrReset = (f: { change: { case: string | undefined; value?: unknown } }): Written => (f.change.case === "set" ? { value: f.change.value } : RESET);

/** Per type of a Set message's field: the value it sets, or that it resets. */
const WRITERS: Record<string, (field: never) => Written> = {
  [SetBoolSchema.typeName]: setOrReset,
  [SetUint32Schema.typeName]: setOrReset,
  [SetMessageSubjectSchema.typeName]: setOrReset,
  [SetMessageBodySchema.typeName]: setOrReset,
  // An empty key or list: no value of the context's own.
  [LanguageSchema.typeName]: (f: Language) => (f.key === "" ? RESET : { value: f.key }),
  [SetLanguagesSchema.typeName]: (f: SetLanguages) => (f.languages.length === 0 ? RESET : { value: f.languages.map((l) => l.key) }),
};

const ownerToProto = (owner: Owner | undefined) => owner && { type: OWNER_TYPES[owner.type], id: owner.id };

/** Per type of a Resolved message's field: the message for a value and where it comes from. */
const READERS: Record<string, (value: unknown, owner: Owner | undefined) => unknown> = {
  [ResolvedBoolSchema.typeName]: (value, owner) => ({ value: value === true, owner: ownerToProto(owner) }),
  [ResolvedStringSchema.typeName]: (value, owner) => ({ value: String(value), owner: ownerToProto(owner) }),
  [ResolvedUint32Schema.typeName]: (value, owner) => ({ value: Number(value), owner: ownerToProto(owner) }),
  [ResolvedLanguagesSchema.typeName]: (value, owner) => ({ value: (value as string[]).map((key) => ({ key })), owner: ownerToProto(owner) }),
};

function codecFor<T>(table: Record<string, T>, desc: DescMessage, fieldName: string): [string, T] {
  const field = desc.fields.find((f) => f.name === fieldName);
  const codec = field?.message && table[field.message.typeName];
  // A kind and its messages disagree: a wiring bug found by the first call of any test.
  if (!field || !codec) throw new Error(`${desc.typeName} has no settings field ${fieldName} of a known type`);
  return [field.localName, codec];
}

/** The change a Set message asks for: its present fields, each a property of the kind. */
export function changeFromProto(desc: DescMessage, message: Message, kind: SettingsKind): SettingsChange {
  const change: SettingsChange = { set: {}, reset: [] };
  for (const field of desc.fields) {
    const present = (message as unknown as Record<string, unknown>)[field.localName];
    if (present === undefined) continue;
    const [, write] = codecFor(WRITERS, desc, field.name);
    if (!Object.hasOwn(kind.properties, field.name)) throw new Error(`${desc.typeName}.${field.name} is no property of ${kind.name} settings`);
    const written = write(present as never);
    if (written === RESET) change.reset.push(field.name);
    else change.set[field.name] = written.value;
  }
  return change;
}

/** A Resolved message: every property of the kind, with its owner when inherited. */
export function resolvedToProto<Desc extends DescMessage>(desc: Desc, resolved: Resolved, at: ContextRef): MessageInitShape<Desc> {
  const init: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(resolved)) {
    const [localName, read] = codecFor(READERS, desc, name);
    init[localName] = read(value.value, ownerFor(value, at));
  }
  return init as MessageInitShape<Desc>;
}

export function settingsDetailsToProto(d: SettingsDetails): Details {
  return create(DetailsSchema, {
    sequence: BigInt(d.sequence),
    ...(d.changeDate && { changeDate: timestampFromDate(d.changeDate) }),
    owner: ownerToProto(d.owner),
  });
}
