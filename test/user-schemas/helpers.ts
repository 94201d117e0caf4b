import { PlatformUserSchemas } from "../../gen/platform/resources/user_schema/v3alpha/user_schema_service_pb.js";
import type { Protocol } from "../support/clients.js";
import { serviceClient } from "../support/service-client.js";

export const schemaClient = (baseUrl: string, token: string, protocol: Protocol = "grpc") => serviceClient(PlatformUserSchemas, baseUrl, token, protocol);

/** An employee: a name, an optional email, a salary only its administrators may read, a searchable team. */
export const EMPLOYEE = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1 },
    email: { type: "string", format: "email" },
    salary: { type: "integer", minimum: 0, "urn:platform:permission": { owner: "rw" } },
    team: { type: "string", "urn:platform:searchable": true },
    nickname: { type: "string", "urn:platform:permission": { owner: "rw", self: "rw" } },
  },
  required: ["name"],
  additionalProperties: false,
};
