import { orgOfUser } from "../../../domain/user/queries.js";
import { DomainError } from "../../../domain/errors.js";
import { providerReaches } from "../../../domain/idp/login-use.js";
import { linkExternalAccount, type ExternalAccount } from "../../../domain/user/external-identities.js";
import type { SignInProgress, SignInStep } from "../kit/context.js";
import { dropRecord, readRecord } from "../../adapters/login-records.js";
import { errorBody } from "../view/render.js";
import type { ExternalUser } from "../../../upstream-idps/clients.js";
import { pageActor } from "../kit/page-origin.js";

/**
 * What the provider's callback keeps for the pages after it, under the interaction's uid in
 * `oidc_payloads` (../records.ts): the upstream user, and the provider and organization of
 * the login.
 */
export interface LoginRecord {
  idpId: string;
  orgId: string;
  /** The login is restricted to the organization (its scope names it). */
  restricted: boolean;
  user: ExternalUser;
}

export const LOGIN_MODEL = "ExternalLogin";

export function accountOf(record: LoginRecord): ExternalAccount {
  return { idpId: record.idpId, externalUserId: record.user.id, username: record.user.username, email: record.user.email };
}

/** What a sign-in's progress carries for the external account it is to link (context.ts, `link`). */
export const linkKey = (record: Pick<LoginRecord, "idpId" | "user">) => `${record.idpId}/${record.user.id}`;

/**
 * Writes the link a sign-in was started for, now that it passed every factor the person's
 * settings ask for: a link written after the password alone would let anyone who knows a
 * password, and not the second factor, sign in through the provider from then on. The
 * account is the interaction's external login's, which must still be the one the progress
 * names, and the provider must still reach the user's organization (domain/idp/login-use.ts).
 * False when it was not written (the page saying why was sent).
 */
export async function writePendingLink(s: SignInStep, p: SignInProgress & { link: string }): Promise<boolean> {
  const { c, t } = s;
  const record = await readRecord<LoginRecord>(c.db, c.instanceId, LOGIN_MODEL, s.details.uid);
  if (!record || linkKey(record) !== p.link) {
    s.show(400, t.errorTitle, errorBody(t.loginExpired));
    return false;
  }
  const actor = pageActor(s, p.userId);
  try {
    await c.transact(async (tx) => {
      const orgId = await orgOfUser(tx, c.instanceId, p.userId);
      if (!orgId || !(await providerReaches(tx, c.instanceId, orgId, record.idpId))) throw new LinkRefused();
      await linkExternalAccount(tx, actor, p.userId, accountOf(record));
    });
  } catch (error) {
    const refused =
      error instanceof LinkRefused
        ? ([403, t.externalNoAccount] as const)
        : error instanceof DomainError && error.kind === "already_exists"
          ? ([409, t.externalAlreadyLinked] as const)
          : undefined;
    if (!refused) throw error;
    s.show(refused[0], t.errorTitle, errorBody(refused[1]));
    return false;
  }
  await dropRecord(c.db, c.instanceId, LOGIN_MODEL, s.details.uid);
  return true;
}

class LinkRefused extends Error {}
