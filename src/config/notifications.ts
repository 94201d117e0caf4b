import { duration, HOUR_MS } from "./env.js";
import { notificationProviderSettings, type NotificationProviderSettings } from "./notification-providers.js";
import { queueSettings, type QueueSettings } from "./queues.js";

/** The outbox of messages (src/engines/notifications/outbox/) and the codes they carry. */
export interface NotificationOutboxSettings extends QueueSettings {
  /** How long a code lasts: verification and reset codes per channel, invitations. */
  codeTtlMs: { email: number; sms: number; invite: number; otp: number };
  /** At most one password reset code per user this often. */
  resetIntervalMs: number;
  /** The login pages answer a reset request no sooner than this, found or not, so that timing tells nothing. */
  resetAnswerMs: number;
}

export function notificationSettings(env: NodeJS.ProcessEnv): {
  notifications: NotificationOutboxSettings;
  notificationProviders: NotificationProviderSettings;
} {
  return {
    notificationProviders: notificationProviderSettings(env),
    notifications: {
      // A message fails at its maximum age, and at the latest when its code expires.
      ...queueSettings(env, "PLATFORM_NOTIFICATION", "1h"),
      codeTtlMs: {
        email: duration(env, "PLATFORM_CODE_TTL_EMAIL", "1h", 720 * HOUR_MS),
        sms: duration(env, "PLATFORM_CODE_TTL_PHONE", "10m", 24 * HOUR_MS),
        invite: duration(env, "PLATFORM_CODE_TTL_INVITE", "72h", 720 * HOUR_MS),
        otp: duration(env, "PLATFORM_CODE_TTL_OTP", "5m", HOUR_MS),
      },
      resetIntervalMs: duration(env, "PLATFORM_PASSWORD_RESET_INTERVAL", "1m", 24 * HOUR_MS, 0),
      resetAnswerMs: duration(env, "PLATFORM_PASSWORD_RESET_ANSWER_TIME", "500ms", 10_000, 0),
    },
  };
}
