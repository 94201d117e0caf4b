import type { SignInLogSettings } from "../domain/audit/sign-in-log.js";
import { duration, HOUR_MS, integer, TEN_YEARS_MS } from "./env.js";

/** The audit log's sign-in events: how they are summed up (src/domain/audit/sign-in-log.ts) and how long they stay. */
export interface AuditSettings {
  /** Sign-in events are deleted after the instance's audit log retention, or this where it has none, every sweep interval (domain/audit/retention.ts). */
  signInRetention: { retentionMs: number; sweepIntervalMs: number };
  signInLog: SignInLogSettings;
}

export function auditSettings(env: NodeJS.ProcessEnv): AuditSettings {
  return {
    signInRetention: {
      retentionMs: duration(env, "PLATFORM_AUDIT_SIGNIN_RETENTION", "2160h", TEN_YEARS_MS, 60_000),
      sweepIntervalMs: duration(env, "PLATFORM_AUDIT_SIGNIN_SWEEP_INTERVAL", "10m", 24 * HOUR_MS, 100),
    },
    signInLog: {
      windowMs: duration(env, "PLATFORM_AUDIT_SIGNIN_WINDOW", "1m", 24 * HOUR_MS),
      burst: integer(env, "PLATFORM_AUDIT_SIGNIN_BURST", 10, 0, 1_000_000),
      keys: integer(env, "PLATFORM_AUDIT_SIGNIN_KEYS", 10_000, 1, 10_000_000),
      buffer: integer(env, "PLATFORM_AUDIT_SIGNIN_BUFFER", 10_000, 1, 10_000_000),
      flushIntervalMs: duration(env, "PLATFORM_AUDIT_SIGNIN_FLUSH_INTERVAL", "250ms", 60_000, 10),
    },
  };
}
