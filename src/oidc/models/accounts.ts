import type { Account } from "../../domain/user/accounts.js";

/**
 * The claims of an account that the granted scopes release (OpenID Connect Core 1.0,
 * section 5.4). `address` is a standard scope with nothing stored behind it yet.
 */
export function claimsOf(account: Account, scopes: ReadonlySet<string>): Record<string, unknown> {
  const u = account.row;
  const claims: Record<string, unknown> = { sub: account.userId };
  if (scopes.has("profile")) {
    Object.assign(claims, {
      name: u.name,
      ...(u.given_name && { given_name: u.given_name }),
      ...(u.family_name && { family_name: u.family_name }),
      ...(u.nick_name && { nickname: u.nick_name }),
      ...(u.preferred_language && { locale: u.preferred_language }),
      ...(u.gender && { gender: u.gender }),
      preferred_username: account.loginName,
      updated_at: Math.floor(u.change_date.getTime() / 1000),
      "urn:platform:iam:user:resourceowner:id": account.orgId,
      "urn:platform:iam:user:resourceowner:name": account.orgName,
      "urn:platform:iam:user:resourceowner:primary_domain": account.primaryDomain,
    });
  }
  if (scopes.has("email") && u.email) Object.assign(claims, { email: u.email, email_verified: u.email_verified ?? false });
  if (scopes.has("phone") && u.phone) Object.assign(claims, { phone_number: u.phone, phone_number_verified: u.phone_verified ?? false });
  return claims;
}
