import { duration, HOUR_MS } from "./env.js";
import { queueSettings, type QueueSettings } from "./queues.js";

/** Calls of action targets (src/engines/actions/). */
export interface ActionSettings {
  /** After a target's signing key is regenerated, calls carry a signature by the old key too for this long. */
  signingKeyGraceMs: number;
  /** Event executions' deliveries (actions/delivery-worker.ts). */
  delivery: QueueSettings;
}

export function actionSettings(env: NodeJS.ProcessEnv): { actions: ActionSettings } {
  return {
    actions: {
      signingKeyGraceMs: duration(env, "PLATFORM_ACTIONS_SIGNING_KEY_GRACE", "1h", 720 * HOUR_MS),
      delivery: queueSettings(env, "PLATFORM_ACTIONS_DELIVERY", "24h"),
    },
  };
}
