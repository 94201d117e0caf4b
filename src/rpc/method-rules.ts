import { getOption, hasOption, ScalarType } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { DescField, DescMethod, DescService } from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb.js";
import { isPermission } from "../domain/authz/roles.js";
import { isResourceKind, isReusableKind, RESOURCE_GRANTEES, RESOURCE_TOKENS } from "../domain/authz/resource-owners.js";
import { isFeatureName } from "../domain/feature/catalog.js";
import { ContextKind, field as fieldExt, method as methodExt, service as serviceExt } from "../../gen/platform/options/v1/options_pb.js";

export const PUBLIC = "public";
export const AUTHENTICATED = "authenticated";

/** What generic code needs to know of a method, read once from its proto options. */
export interface MethodRules {
  permission: string;
  features: string[];
  successStatus: number;
  createdField: string | undefined;
  /** Serves no instance: no tenant is resolved from the Host header. */
  tenantless: boolean;
  /** The kinds of context the request's `ctx` may select; empty for requests without one. */
  contexts: ReadonlySet<ContextKindName>;
  /** The request's `ctx` field, when it has one. */
  ctxField: DescField | undefined;
  /** The resource the request names, whose owning context the permission is checked in. */
  resource: { kind: string; field: DescField; reusable: boolean } | undefined;
  /** A search: the permission is checked per result (see options.proto). */
  perResult: boolean;
  /** Users may call it on themselves without the permission. */
  self: boolean;
  /**
   * Request fields that still need the permission when `self` lets the caller act, with why
   * (options.proto `not_for_self`): each as its path from the request, through singular
   * message fields (PatchUser's `user.username`).
   */
  notForSelf: readonly { path: readonly DescField[]; reason: string }[];
  /** Creates in an organization: the ctx's, else the instance's default. */
  inOrg: boolean;
  /** With "authenticated": the caller must belong to the request's context. */
  contextMember: boolean;
  /** The request field that may carry the resource's own secret instead of the permission. */
  tokenField: DescField | undefined;
  /** Organizations the resource's project is granted to may call it too (options.proto `for_grantees`). */
  forGrantees: boolean;
}

export type ContextKindName = "system" | "instance" | "org" | "project_grant";

const CONTEXT_KINDS: Record<number, ContextKindName> = {
  [ContextKind.SYSTEM]: "system",
  [ContextKind.INSTANCE]: "instance",
  [ContextKind.ORG]: "org",
  [ContextKind.PROJECT_GRANT]: "project_grant",
};

/** The request field that selects the context, by the name the whole API uses. */
function ctxFieldOf(method: DescMethod): DescField | undefined {
  const field = method.input.fields.find((f) => f.name === "ctx");
  return field?.message?.typeName === "platform.object.v3alpha.RequestContext" ? field : undefined;
}

/**
 * Third-party services whose protos we cannot annotate. gRPC tooling calls them without a
 * token or an instance, as it does on any gRPC server.
 */
const INFRASTRUCTURE: ReadonlySet<string> = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

const INFRASTRUCTURE_RULES: MethodRules = {
  permission: PUBLIC,
  features: [],
  successStatus: 200,
  createdField: undefined,
  tenantless: true,
  contexts: new Set(),
  ctxField: undefined,
  resource: undefined,
  perResult: false,
  self: false,
  notForSelf: [],
  inOrg: false,
  contextMember: false,
  tokenField: undefined,
  forGrantees: false,
};

/** Kinds of resource that are some user's: `self` lets that user act on them. */
const SELF_KINDS: ReadonlySet<string> = new Set(["user", "session"]);

const cache = new WeakMap<DescMethod, MethodRules | null>();

/** Undefined for a method that declares nothing: the interceptors refuse to serve it. */
export function methodRules(method: DescMethod): MethodRules | undefined {
  let rules = cache.get(method);
  if (rules === undefined) {
    rules = readRules(method);
    cache.set(method, rules);
  }
  return rules ?? undefined;
}

function readRules(method: DescMethod): MethodRules | null {
  if (INFRASTRUCTURE.has(method.parent.typeName)) return INFRASTRUCTURE_RULES;
  if (!hasOption(method, methodExt)) return null;
  const own = getOption(method, methodExt);
  const service = hasOption(method.parent, serviceExt) ? getOption(method.parent, serviceExt) : undefined;
  return {
    permission: own.permission,
    features: [...new Set([...(service?.features ?? []), ...own.features])],
    successStatus: own.successStatus || 200,
    createdField: own.createdField || undefined,
    tenantless: false,
    contexts: new Set((service?.contexts ?? []).map((kind) => CONTEXT_KINDS[kind]).filter((k) => k !== undefined)),
    ctxField: ctxFieldOf(method),
    resource: own.resource ? resourceOf(method, own.resource, own.resourceField || "id") : undefined,
    perResult: own.perResult,
    self: own.self,
    notForSelf: notForSelfFields(method.input.fields),
    inOrg: own.inOrg,
    contextMember: own.contextMember,
    tokenField: own.tokenField ? stringField(method, own.tokenField, "token_field") : undefined,
    forGrantees: own.forGrantees,
  };
}

function notForSelfFields(fields: readonly DescField[], above: readonly DescField[] = []): MethodRules["notForSelf"] {
  return fields.flatMap((field) => {
    const reason = hasOption(field, fieldExt) ? getOption(field, fieldExt).notForSelf : "";
    if (reason) return [{ path: [...above, field], reason }];
    // Request messages are trees of a few levels; a message type met again above is not walked twice.
    if (field.fieldKind !== "message" || above.some((f) => f.message === field.message)) return [];
    return notForSelfFields(field.message.fields, [...above, field]);
  });
}

function resourceOf(method: DescMethod, kind: string, fieldName: string): MethodRules["resource"] {
  return { kind, field: stringField(method, fieldName, "resource_field"), reusable: isReusableKind(kind) };
}

function stringField(method: DescMethod, fieldName: string, option: string): DescField {
  const field = method.input.fields.find((f) => f.name === fieldName);
  if (!field || field.fieldKind !== "scalar" || field.scalar !== ScalarType.STRING) {
    throw new Error(`${method.parent.typeName}.${method.name}: ${option} ${fieldName} is not a string field of the request`);
  }
  return field;
}

/**
 * Every served method must declare a permission and known feature flags, and each of our
 * own an HTTP rule. Checked at start-up so that a forgotten option never ships open.
 */
export function assertDeclared(services: readonly DescService[]): void {
  for (const service of services) {
    for (const method of service.methods) {
      const name = `${service.typeName}.${method.name}`;
      const rules = methodRules(method);
      if (!rules?.permission) throw new Error(`${name} declares no (platform.options.v1.method).permission`);
      if (!rules.tenantless && rules.permission !== PUBLIC && rules.permission !== AUTHENTICATED && !isPermission(rules.permission)) {
        throw new Error(`${name} declares the unknown permission ${rules.permission} (see domain/authz/roles.ts)`);
      }
      if (rules.resource && !isResourceKind(rules.resource.kind)) throw new Error(`${name} names the unknown resource kind ${rules.resource.kind}`);
      if (rules.resource && rules.perResult) throw new Error(`${name}: a method names one resource or searches many, not both`);
      if (rules.self && rules.resource ? !SELF_KINDS.has(rules.resource.kind) : rules.self && !/^Search/.test(method.name)) {
        throw new Error(`${name}: self needs a resource of a user (${[...SELF_KINDS].join(", ")}), or a search`);
      }
      if (rules.tokenField && !(rules.resource && Object.hasOwn(RESOURCE_TOKENS, rules.resource.kind)))
        throw new Error(`${name}: token_field needs a resource with a token (${Object.keys(RESOURCE_TOKENS).join(", ")})`);
      if (rules.inOrg && (rules.resource || rules.perResult || !rules.contexts.has("org"))) {
        throw new Error(`${name}: in_org is for creating in an organization context, not with resource or per_result`);
      }
      if (rules.forGrantees && !(rules.resource && Object.hasOwn(RESOURCE_GRANTEES, rules.resource.kind)))
        throw new Error(`${name}: for_grantees needs a resource of a project (${Object.keys(RESOURCE_GRANTEES).join(", ")})`);
      const unknown = rules.features.find((f) => !isFeatureName(f));
      if (unknown) throw new Error(`${name} names the unknown feature flag ${unknown}`);
      if (!rules.tenantless && !hasOption(method, http)) throw new Error(`${name} declares no google.api.http rule`);
      // A ctx the server would ignore, or contexts nobody can select, is a wiring mistake.
      if (Boolean(rules.ctxField) !== rules.contexts.size > 0) {
        throw new Error(`${name}: a request with a ctx field needs (platform.options.v1.service).contexts, and only then`);
      }
      if (rules.contextMember && rules.permission !== AUTHENTICATED) throw new Error(`${name}: context_member refines permission "authenticated" only`);
      if (rules.contexts.has("system") && ((rules.resource && rules.resource.kind !== "instance" && !isReusableKind(rules.resource.kind)) || rules.inOrg)) {
        throw new Error(`${name}: in a system context a request names no resource inside an instance`);
      }
    }
  }
}

/** For interceptors: a method without rules is never served. */
export function requireRules(method: DescMethod): MethodRules {
  const rules = methodRules(method);
  if (!rules) throw new ConnectError(`${method.parent.typeName}.${method.name} is not served`, Code.Unimplemented);
  return rules;
}
