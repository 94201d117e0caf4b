import type { Db, Tx } from "../../store/db.js";
import { invalidArgument } from "../errors.js";
import type { SettingsKind } from "./kind.js";
import { resolveSettings } from "./rows.js";

/**
 * How organizations may use their domains. Set in the system and per instance: a domain's
 * rules hold for the whole instance, whose organizations share one namespace of domains,
 * so an organization cannot loosen them for itself.
 */
export const DOMAIN_SETTINGS: SettingsKind = {
  name: "domain",
  properties: {
    // Off, as in ZITADEL's default domain policy: a fresh installation works without DNS.
    validate_org_domains: {
      levels: new Set(["system", "instance"] as const),
      builtIn: false,
      check: (v) => {
        if (typeof v !== "boolean") throw invalidArgument("validate_org_domains is true or false");
      },
    },
  },
};

/** Whether the instance's added domains must be verified before they become primary or sign users in. */
export async function validatesOrgDomains(db: Db | Tx, instanceId: string): Promise<boolean> {
  const { resolved } = await resolveSettings(db, DOMAIN_SETTINGS, { type: "instance", instanceId });
  return resolved.validate_org_domains!.value === true;
}
