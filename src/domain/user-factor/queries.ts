import type { Db, Tx } from "../../store/eventstore.js";
import type { UserRow } from "../../store/schema.js";
import type { AuthMethod, SecondFactorType } from "./model.js";

/**
 * The second factors a person can use now: a ready TOTP, and the email and SMS codes while
 * the address or number is verified. `recoveryCodes`: how many unused recovery codes it has.
 */
export async function usableFactors(db: Db | Tx, user: Pick<UserRow, "instance_id" | "id" | "email_verified" | "phone_verified">): Promise<{ factors: SecondFactorType[]; recoveryCodes: number }> {
  const { ready, recoveryCodes } = await readyFactors(db, user);
  const factors = ready.filter((type) => (type === "otp_email" ? user.email_verified === true : type === "otp_sms" ? user.phone_verified === true : true));
  return { factors, recoveryCodes };
}

/** The factors set up (a TOTP verified), used or not, strongest first, and the count of unused recovery codes. */
export async function readyFactors(db: Db | Tx, user: Pick<UserRow, "instance_id" | "id">): Promise<{ ready: SecondFactorType[]; recoveryCodes: number }> {
  const [rows, codes] = await Promise.all([
    db.selectFrom("user_factors").select(["type", "state"]).where("instance_id", "=", user.instance_id).where("user_id", "=", user.id).execute(),
    db
      .selectFrom("user_recovery_codes")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("instance_id", "=", user.instance_id)
      .where("user_id", "=", user.id)
      .where("used_at", "is", null)
      .executeTakeFirstOrThrow(),
  ]);
  const ready = new Set(rows.filter((r) => r.state === "ready").map((r) => r.type));
  return { ready: ORDER.filter((t) => ready.has(t)), recoveryCodes: Number(codes.n) };
}

/** The order in which pages and lists name the factors: the strongest first. */
const ORDER: SecondFactorType[] = ["totp", "otp_sms", "otp_email"];

/** What a user has set up to sign in with: types only, in the order of AUTH_METHODS. */
export async function authMethodsOf(db: Db, user: UserRow): Promise<AuthMethod[]> {
  const [password, passkey, idp, { ready, recoveryCodes }] = await Promise.all([
    db.selectFrom("user_secrets").select("kind").where("instance_id", "=", user.instance_id).where("user_id", "=", user.id).where("kind", "=", "password").executeTakeFirst(),
    db.selectFrom("user_webauthn_keys").select("id").where("instance_id", "=", user.instance_id).where("user_id", "=", user.id).where("kind", "=", "passkey").where("state", "=", "ready").limit(1).executeTakeFirst(),
    db.selectFrom("external_identities").select("idp_id").where("instance_id", "=", user.instance_id).where("user_id", "=", user.id).limit(1).executeTakeFirst(),
    readyFactors(db, user),
  ]);
  const methods: AuthMethod[] = [];
  if (password) methods.push("password");
  if (passkey) methods.push("passkey");
  if (idp) methods.push("idp");
  for (const type of ["totp", "otp_email", "otp_sms"] as const) if (ready.includes(type)) methods.push(type);
  if (recoveryCodes > 0) methods.push("recovery_codes");
  return methods;
}
