import type { SecretBox } from "../../crypto/encryption.js";
import type { Db, Tx } from "../../store/db.js";
import type { UserRow } from "../../store/schema.js";
import { AUTH_METHODS, type AuthMethod, type SecondFactorType } from "./model.js";

/** What a person has set up beyond its password: second factors, whether it has a passkey, unused recovery codes. */
export interface Factors {
  /** Strongest first. */
  factors: SecondFactorType[];
  passkey: boolean;
  recoveryCodes: number;
}

/**
 * The second factors a person can use now: a ready TOTP, a registered security key, and the
 * email and SMS codes while the address or number is verified; whether it has a passkey (a
 * multi-factor, counted where the login settings allow it: due.ts).
 */
export async function usableFactors(db: Db | Tx, user: Pick<UserRow, "instance_id" | "id" | "email_verified" | "phone_verified">): Promise<Factors> {
  const { factors, ...rest } = await readyFactors(db, user);
  return {
    factors: factors.filter((type) => (type === "otp_email" ? user.email_verified === true : type === "otp_sms" ? user.phone_verified === true : true)),
    ...rest,
  };
}

/** The factors set up (a TOTP verified, a key registered), used or not, strongest first. */
async function readyFactors(db: Db | Tx, user: Pick<UserRow, "instance_id" | "id">): Promise<Factors> {
  const [rows, keys, codes] = await Promise.all([
    db.selectFrom("user_factors").select(["type", "state"]).where("instance_id", "=", user.instance_id).where("user_id", "=", user.id).execute(),
    db
      .selectFrom("user_webauthn_keys")
      .select("kind")
      .distinct()
      .where("instance_id", "=", user.instance_id)
      .where("user_id", "=", user.id)
      .where("state", "=", "ready")
      .execute(),
    db
      .selectFrom("user_recovery_codes")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("instance_id", "=", user.instance_id)
      .where("user_id", "=", user.id)
      .where("used_at", "is", null)
      .executeTakeFirstOrThrow(),
  ]);
  const ready = new Set<string>([...rows.filter((r) => r.state === "ready").map((r) => r.type), ...keys.map((k) => k.kind)]);
  return { factors: ORDER.filter((t) => ready.has(t)), passkey: ready.has("passkey"), recoveryCodes: Number(codes.n) };
}

/** The order in which pages and lists name the factors: the strongest first (a security key cannot be phished). */
const ORDER: SecondFactorType[] = ["u2f", "totp", "otp_sms", "otp_email"];

/** What a user has set up to sign in with: types only, in the order of AUTH_METHODS. */
export async function authMethodsOf(db: Db, user: UserRow): Promise<AuthMethod[]> {
  const [password, idp, ready] = await Promise.all([
    db
      .selectFrom("user_secrets")
      .select("kind")
      .where("instance_id", "=", user.instance_id)
      .where("user_id", "=", user.id)
      .where("kind", "=", "password")
      .executeTakeFirst(),
    db
      .selectFrom("external_identities")
      .select("idp_id")
      .where("instance_id", "=", user.instance_id)
      .where("user_id", "=", user.id)
      .limit(1)
      .executeTakeFirst(),
    readyFactors(db, user),
  ]);
  const has: Record<AuthMethod, boolean> = {
    password: password !== undefined,
    passkey: ready.passkey,
    idp: idp !== undefined,
    totp: ready.factors.includes("totp"),
    u2f: ready.factors.includes("u2f"),
    otp_email: ready.factors.includes("otp_email"),
    otp_sms: ready.factors.includes("otp_sms"),
    recovery_codes: ready.recoveryCodes > 0,
  };
  return AUTH_METHODS.filter((m) => has[m]);
}

/** The secret of a TOTP added and not verified yet (to show again beside a wrong first code); undefined when none is pending. */
export async function pendingTotpSecret(db: Db, box: SecretBox, instanceId: string, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("user_factors")
    .select(["sealed_secret", "state"])
    .where("instance_id", "=", instanceId)
    .where("user_id", "=", userId)
    .where("type", "=", "totp")
    .executeTakeFirst();
  return row?.state === "pending" && row.sealed_secret ? box.decrypt(row.sealed_secret) : undefined;
}
