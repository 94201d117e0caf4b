import { getOption, hasOption } from "@bufbuild/protobuf";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb.js";
import { method as methodExt, service as serviceExt } from "../../gen/platform/options/v1/options_pb.js";

export const PUBLIC = "public";
export const AUTHENTICATED = "authenticated";

/** What generic code needs to know of a method, read once from its proto options. */
export interface MethodRules {
  permission: string;
  features: string[];
  successStatus: number;
  createdField: string | undefined;
}

const cache = new WeakMap<DescMethod, MethodRules | null>();

/** Undefined for methods without our options: infrastructure such as health and reflection. */
export function methodRules(method: DescMethod): MethodRules | undefined {
  let rules = cache.get(method);
  if (rules === undefined) {
    rules = readRules(method);
    cache.set(method, rules);
  }
  return rules ?? undefined;
}

function readRules(method: DescMethod): MethodRules | null {
  if (!hasOption(method, methodExt)) return null;
  const own = getOption(method, methodExt);
  const inherited = hasOption(method.parent, serviceExt) ? getOption(method.parent, serviceExt).features : [];
  return {
    permission: own.permission,
    features: [...new Set([...inherited, ...own.features])],
    successStatus: own.successStatus || 200,
    createdField: own.createdField || undefined,
  };
}

/**
 * Every method of our services must declare a permission and, when it is reachable over
 * REST, an HTTP rule. Checked at start-up so that a forgotten option never ships open.
 */
export function assertDeclared(services: readonly DescService[]): void {
  for (const service of services) {
    for (const method of service.methods) {
      const rules = methodRules(method);
      if (!rules?.permission) {
        throw new Error(`${service.typeName}.${method.name} declares no (platform.options.v1.method).permission`);
      }
      if (!hasOption(method, http)) {
        throw new Error(`${service.typeName}.${method.name} declares no google.api.http rule`);
      }
    }
  }
}
