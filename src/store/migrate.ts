import { Migrator, type Kysely, type Migration, type MigrationProvider } from "kysely";
import * as foundation from "./migrations/0001-foundation.js";
import * as instancePositions from "./migrations/0002-instance-positions.js";
import * as organizations from "./migrations/0003-organizations.js";
import * as users from "./migrations/0004-users.js";
import * as instanceSettings from "./migrations/0005-instance-settings.js";
import * as reusableAndSettings from "./migrations/0006-reusable-resources-and-settings.js";
import * as projectsAppsAndGrants from "./migrations/0007-projects-apps-and-grants.js";
import * as oidcStorage from "./migrations/0008-oidc-storage.js";
import * as loginAttempts from "./migrations/0009-login-attempts.js";
import * as externalIdentities from "./migrations/0010-external-identities.js";
import * as targetKeyRotation from "./migrations/0011-target-key-rotation.js";
import * as userMetadata from "./migrations/0013-user-metadata.js";
import * as actionDeliveries from "./migrations/0012-action-deliveries.js";
import * as instanceEventIndex from "./migrations/0014-instance-event-index.js";
import * as notificationProviders from "./migrations/0015-notification-providers.js";
import * as notifications from "./migrations/0017-notifications.js";
import * as domainValidation from "./migrations/0018-domain-validation.js";
import * as secondFactors from "./migrations/0019-second-factors.js";
import * as sessions from "./migrations/0020-sessions.js";
import * as webauthn from "./migrations/0021-webauthn.js";
import * as idpIntents from "./migrations/0023-idp-intents.js";
import * as settingsFiles from "./migrations/0022-settings-files.js";
import * as passkeyPrompt from "./migrations/0024-passkey-prompt.js";
import * as instanceHold from "./migrations/0025-instance-hold.js";
import * as instanceHoldRaises from "./migrations/0026-instance-hold-raises.js";
import * as queuedAppends from "./migrations/0027-queued-appends.js";
import * as failedChecksOnUsers from "./migrations/0028-failed-checks-on-users.js";
import * as consoleClient from "./migrations/0029-console-client.js";
import * as auditColumns from "./migrations/0030-audit-columns.js";
import * as projectGrants from "./migrations/0031-project-grants.js";
import * as userSchemas from "./migrations/0032-user-schemas.js";
import * as userSearchValues from "./migrations/0033-user-search-values.js";

/** Listed here rather than read from disk, so that the compiled and the test build agree. */
const migrations: Record<string, Migration> = {
  "0001-foundation": foundation,
  "0002-instance-positions": instancePositions,
  "0003-organizations": organizations,
  "0004-users": users,
  "0005-instance-settings": instanceSettings,
  "0006-reusable-resources-and-settings": reusableAndSettings,
  "0007-projects-apps-and-grants": projectsAppsAndGrants,
  "0008-oidc-storage": oidcStorage,
  "0009-login-attempts": loginAttempts,
  "0010-external-identities": externalIdentities,
  "0011-target-key-rotation": targetKeyRotation,
  "0013-user-metadata": userMetadata,
  "0012-action-deliveries": actionDeliveries,
  "0014-instance-event-index": instanceEventIndex,
  "0015-notification-providers": notificationProviders,
  "0017-notifications": notifications,
  "0018-domain-validation": domainValidation,
  "0019-second-factors": secondFactors,
  "0020-sessions": sessions,
  "0021-webauthn": webauthn,
  "0023-idp-intents": idpIntents,
  "0022-settings-files": settingsFiles,
  "0024-passkey-prompt": passkeyPrompt,
  "0025-instance-hold": instanceHold,
  "0026-instance-hold-raises": instanceHoldRaises,
  "0027-queued-appends": queuedAppends,
  "0028-failed-checks-on-users": failedChecksOnUsers,
  "0029-console-client": consoleClient,
  "0030-audit-columns": auditColumns,
  "0031-project-grants": projectGrants,
  "0032-user-schemas": userSchemas,
  "0033-user-search-values": userSearchValues,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export class MigrationError extends Error {
  constructor(
    readonly migration: string,
    cause: unknown,
  ) {
    super(`migration ${migration} failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations speak to past schemas, which no table type describes (Kysely's advice)
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) throw new MigrationError(failed?.migrationName ?? "(setup)", error);
  return (results ?? []).map((r) => r.migrationName);
}
