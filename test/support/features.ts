import type { JsonObject } from "@bufbuild/protobuf";
import { expect } from "vitest";
import { PlatformFeatureSettings } from "../../gen/platform/settings/feature/v3alpha/feature_service_pb.js";
import { protocolClient } from "./clients.js";

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Sets (or with undefined resets) a feature flag in an instance through PlatformFeatureSettings. */
export async function setInstanceFlag(
  server: { baseUrl: string; adminToken: string },
  instanceId: string,
  name: string,
  enabled: boolean | undefined,
): Promise<void> {
  const change: JsonObject = enabled === undefined ? { reset: true } : { set: enabled };
  const result = await protocolClient(PlatformFeatureSettings, "grpc", server.baseUrl).call(
    "SetFeatures",
    { ctx: { instanceId }, settings: { [camel(name)]: change } },
    server.adminToken,
  );
  expect(result, `set ${name}=${enabled} in ${instanceId}`).toMatchObject({ ok: true });
}
