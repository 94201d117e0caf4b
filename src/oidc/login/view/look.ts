import { appNameByClientId } from "../../../domain/app/queries.js";
import { resolveBranding, type Branding } from "../../../domain/settings/branding.js";
import { instanceName } from "../../../domain/instance/queries.js";
import { orgName } from "../../../domain/org/queries.js";
import { defaultOrgOf } from "../../../domain/user/login-names.js";
import type { Db } from "../../../store/db.js";
import { loginLanguage } from "./language.js";
import type { Language } from "./texts/index.js";

/**
 * Whose login a page is: the branding of the login's organization, its name (shown where no
 * logo is, and as the logo's text), and within an interaction the application the person
 * signs in to. Every page of an interaction has the look of the organization the login is
 * for (the scope's or the login hint's, else the instance's default one), from the first page
 * on: it does not change once the person is known.
 */
export interface Look {
  branding: Branding;
  /** Whose login it is: the organization's name, or the instance's for a login of its default organization. */
  name: string;
  /** The instance's name: the issuer an authenticator app shows, the relying party a passkey names. */
  instanceName: string;
  /** The application's name (its client's), on the pages of an interaction. */
  appName?: string;
}

/** What every page of a login shows around its content: its language and whose login it is. */
export interface Frame {
  lang: Language;
  look: Look;
}

/** The name of the application with this client_id, when it is one of the instance's. */
async function appNameOf(db: Db, instanceId: string, clientId: string): Promise<string | undefined> {
  if (clientId.length > 200) return undefined;
  return appNameByClientId(db, instanceId, clientId);
}

export async function lookOf(c: { db: Db; instanceId: string }, where: { orgId: string; clientId?: unknown }): Promise<Look> {
  const [branding, instance, org, defaultOrg, appName] = await Promise.all([
    resolveBranding(c.db, { instanceId: c.instanceId, orgId: where.orgId }),
    instanceName(c.db, c.instanceId),
    orgName(c.db, c.instanceId, where.orgId),
    defaultOrgOf(c.db, c.instanceId),
    typeof where.clientId === "string" ? appNameOf(c.db, c.instanceId, where.clientId) : undefined,
  ]);
  const name = org !== undefined && where.orgId !== defaultOrg ? org : instance;
  return { branding, name, instanceName: instance, ...(appName && { appName }) };
}

/** The frame of a page outside a valid interaction: the default organization's language and look. */
export async function fallbackFrame(c: { db: Db; instanceId: string }, acceptLanguage: string | undefined): Promise<Frame> {
  const orgId = await defaultOrgOf(c.db, c.instanceId);
  const [lang, look] = await Promise.all([loginLanguage(c.db, { instanceId: c.instanceId, orgId }, undefined, acceptLanguage), lookOf(c, { orgId })]);
  return { lang, look };
}
