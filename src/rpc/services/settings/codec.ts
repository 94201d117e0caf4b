import { create, type DescMessage, type Message, type MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromDate, type Duration } from "@bufbuild/protobuf/wkt";
import {
  MultiFactorType,
  PasswordlessType,
  ResolvedMultiFactorsSchema,
  ResolvedPasswordlessTypeSchema,
  ResolvedSecondFactorsSchema,
  SecondFactorType,
  SetMultiFactorsSchema,
  SetPasswordlessTypeSchema,
  SetSecondFactorsSchema,
  type SetMultiFactors,
  type SetSecondFactors,
} from "../../../../gen/platform/settings/login/v3alpha/login_pb.js";
import {
  LanguageSchema,
  ResolvedLanguagesSchema,
  SetLanguagesSchema,
  type Language,
  type SetLanguages,
} from "../../../../gen/platform/settings/language/v3alpha/language_pb.js";
import { SetMessageBodySchema, SetMessageSubjectSchema } from "../../../../gen/platform/settings/message_text/v3alpha/message_text_pb.js";
import {
  BrandingFont,
  ResolvedBrandingFontSchema,
  SetBrandingFontSchema,
  SetColorSchema,
  type SetBrandingFont,
  type SetColor,
} from "../../../../gen/platform/settings/branding/v3alpha/branding_pb.js";
import {
  DetailsSchema,
  ResolvedBoolSchema,
  ResolvedDurationSchema,
  ResolvedStringSchema,
  ResolvedUint32Schema,
  SetBoolSchema,
  SetDurationSchema,
  SetStringSchema,
  SetUint32Schema,
  type Details,
  type SetDuration,
} from "../../../../gen/platform/settings/object/v3alpha/object_pb.js";
import type { ContextRef } from "../../../domain/context.js";
import type { Owner } from "../../../domain/details.js";
import { invalidArgument } from "../../../domain/errors.js";
import type { Resolved, SettingsChange, SettingsKind } from "../../../domain/settings/kind.js";
import { ownerFor, type SettingsDetails } from "../../../domain/settings/rows.js";
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
  [SetStringSchema.typeName]: setOrReset,
  [SetMessageSubjectSchema.typeName]: setOrReset,
  [SetMessageBodySchema.typeName]: setOrReset,
  [SetDurationSchema.typeName]: (f: SetDuration) => (f.change.case === "set" ? { value: durationToMs(f.change.value) } : RESET),
  [SetPasswordlessTypeSchema.typeName]: (f: { change: { case: string | undefined; value?: unknown } }) =>
    f.change.case === "set" ? { value: f.change.value === PasswordlessType.NOT_ALLOWED ? "not_allowed" : "allowed" } : RESET,
  // Colors are kept in lower case, however they were written.
  [SetColorSchema.typeName]: (f: SetColor) => (f.change.case === "set" ? { value: f.change.value.toLowerCase() } : RESET),
  [SetBrandingFontSchema.typeName]: (f: SetBrandingFont) => (f.change.case === "set" ? { value: FONT_NAMES[f.change.value] } : RESET),
  [SetSecondFactorsSchema.typeName]: (f: SetSecondFactors) =>
    f.change.case === "set" ? { value: f.change.value.types.map((t) => SECOND_FACTOR_NAMES[t]) } : RESET,
  [SetMultiFactorsSchema.typeName]: (f: SetMultiFactors) =>
    f.change.case === "set" ? { value: f.change.value.types.map((t) => MULTI_FACTOR_NAMES[t]) } : RESET,
  // An empty key or list: no value of the context's own.
  [LanguageSchema.typeName]: (f: Language) => (f.key === "" ? RESET : { value: f.key }),
  [SetLanguagesSchema.typeName]: (f: SetLanguages) => (f.languages.length === 0 ? RESET : { value: f.languages.map((l) => l.key) }),
};

/**
 * Durations are kept in milliseconds. A part of one is refused, not rounded away (durationMs
 * would): "3600.000000001s" must not pass a kind's whole-seconds check as 3600 s.
 */
function durationToMs({ seconds, nanos }: Duration): number {
  if (nanos % 1_000_000 !== 0) throw invalidArgument("setting durations are whole milliseconds at most");
  return Number(seconds) * 1000 + nanos / 1_000_000;
}

/** Second factors are kept by name (domain/user-factor/model.ts). */
const SECOND_FACTOR_NAMES: Record<SecondFactorType, string> = {
  [SecondFactorType.UNSPECIFIED]: "",
  [SecondFactorType.TOTP]: "totp",
  [SecondFactorType.U2F]: "u2f",
  [SecondFactorType.OTP_EMAIL]: "otp_email",
  [SecondFactorType.OTP_SMS]: "otp_sms",
};
/** Fonts are kept by the name of their stack (domain/settings/branding.ts). */
const FONT_NAMES: Record<BrandingFont, string> = {
  [BrandingFont.UNSPECIFIED]: "",
  [BrandingFont.SYSTEM_UI]: "system-ui",
  [BrandingFont.HUMANIST]: "humanist",
  [BrandingFont.TRANSITIONAL]: "transitional",
  [BrandingFont.MONOSPACE]: "monospace",
};
const FONTS = new Map(Object.entries(FONT_NAMES).map(([font, name]) => [name, Number(font) as BrandingFont]));
const SECOND_FACTOR_TYPES = new Map(Object.entries(SECOND_FACTOR_NAMES).map(([type, name]) => [name, Number(type) as SecondFactorType]));
/** Multi-factors likewise. */
const MULTI_FACTOR_NAMES: Record<MultiFactorType, string> = { [MultiFactorType.UNSPECIFIED]: "", [MultiFactorType.PASSKEY]: "passkey" };
const MULTI_FACTOR_TYPES = new Map(Object.entries(MULTI_FACTOR_NAMES).map(([type, name]) => [name, Number(type) as MultiFactorType]));

const ownerToProto = (owner: Owner | undefined) => owner && { type: OWNER_TYPES[owner.type], id: owner.id };

/** Per type of a Resolved message's field: the message for a value and where it comes from. */
const READERS: Record<string, (value: unknown, owner: Owner | undefined) => unknown> = {
  [ResolvedBoolSchema.typeName]: (value, owner) => ({ value: value === true, owner: ownerToProto(owner) }),
  [ResolvedStringSchema.typeName]: (value, owner) => ({ value: String(value), owner: ownerToProto(owner) }),
  [ResolvedUint32Schema.typeName]: (value, owner) => ({ value: Number(value), owner: ownerToProto(owner) }),
  [ResolvedDurationSchema.typeName]: (value, owner) => ({ value: durationFromMs(Number(value)), owner: ownerToProto(owner) }),
  [ResolvedPasswordlessTypeSchema.typeName]: (value, owner) => ({
    value: value === "not_allowed" ? PasswordlessType.NOT_ALLOWED : PasswordlessType.ALLOWED,
    owner: ownerToProto(owner),
  }),
  [ResolvedSecondFactorsSchema.typeName]: (value, owner) => ({
    value: (value as string[]).map((name) => SECOND_FACTOR_TYPES.get(name)!),
    owner: ownerToProto(owner),
  }),
  [ResolvedMultiFactorsSchema.typeName]: (value, owner) => ({
    value: (value as string[]).map((name) => MULTI_FACTOR_TYPES.get(name)!),
    owner: ownerToProto(owner),
  }),
  [ResolvedBrandingFontSchema.typeName]: (value, owner) => ({ value: FONTS.get(String(value)) ?? BrandingFont.UNSPECIFIED, owner: ownerToProto(owner) }),
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
