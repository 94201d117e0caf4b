import type { Argon2Params } from "../crypto/passwords.js";
import { integer } from "./env.js";

/** Argon2id cost of new password hashes (docs/passwords.md). */
export function passwordSettings(env: NodeJS.ProcessEnv): { passwords: Argon2Params } {
  return {
    passwords: {
      memoryKiB: integer(env, "PLATFORM_PASSWORD_ARGON2_MEMORY_KIB", 19_456, 1024, 4_194_304),
      iterations: integer(env, "PLATFORM_PASSWORD_ARGON2_ITERATIONS", 2, 1, 100),
      parallelism: integer(env, "PLATFORM_PASSWORD_ARGON2_PARALLELISM", 1, 1, 16),
    },
  };
}
