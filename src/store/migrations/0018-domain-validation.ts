import { sql, type Kysely } from "kysely";

/**
 * The pending ownership proof of an organization's domain (GenerateDomainValidation): how it
 * is to be published, the token and when it was made. Kept on the domain's row, so that
 * removing the domain, its organization or its instance removes it too; cleared once the
 * domain is verified. The token is published by design (a TXT record, a file), so it is
 * stored as it is.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table org_domains add column validation_type text check (validation_type in ('dns', 'http'))`.execute(db);
  await sql`alter table org_domains add column validation_token text`.execute(db);
  await sql`alter table org_domains add column validation_created_at timestamptz`.execute(db);
}
