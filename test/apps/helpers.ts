import { createOrg, serviceClient, type Client } from "../support/service-client.js";
import type { JsonObject } from "@bufbuild/protobuf";
import { PlatformApps } from "../../gen/platform/resources/app/v3alpha/app_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformProjects } from "../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { hashToken } from "../../src/crypto/tokens.js";
import type { Protocol } from "../support/clients.js";
import type { TestServer } from "../support/server.js";

export const ACTIVE = "APP_STATE_ACTIVE";
export const INACTIVE = "APP_STATE_INACTIVE";
export const orgOwner = (id: string) => ({ type: "OWNER_TYPE_ORG", id });

export const CODE = "OIDC_RESPONSE_TYPE_CODE";
export const ID_TOKEN = "OIDC_RESPONSE_TYPE_ID_TOKEN";
export const ID_TOKEN_TOKEN = "OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN";
export const AUTH_CODE = "OIDC_GRANT_TYPE_AUTHORIZATION_CODE";
export const IMPLICIT = "OIDC_GRANT_TYPE_IMPLICIT";
export const REFRESH = "OIDC_GRANT_TYPE_REFRESH_TOKEN";
export const WEB = "OIDC_APP_TYPE_WEB";
export const USER_AGENT = "OIDC_APP_TYPE_USER_AGENT";
export const NATIVE = "OIDC_APP_TYPE_NATIVE";
export const BASIC = "OIDC_AUTH_METHOD_TYPE_BASIC";
export const POST = "OIDC_AUTH_METHOD_TYPE_POST";
export const NONE = "OIDC_AUTH_METHOD_TYPE_NONE";
export const PKJWT = "OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT";
export const BEARER = "OIDC_TOKEN_TYPE_BEARER";
export const JWT = "OIDC_TOKEN_TYPE_JWT";
export const API_BASIC = "API_AUTH_METHOD_TYPE_BASIC";
export const API_PKJWT = "API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT";

/** 24 letters and digits. */
export const CLIENT_ID = /^[A-Za-z0-9]{24}$/;
/** 32 random bytes, base64url. */
export const SECRET = /^[A-Za-z0-9_-]{43}$/;

const client = serviceClient;

export const appClient = (baseUrl: string, token: string, protocol: Protocol = "grpc") => client(PlatformApps, baseUrl, token, protocol);
export const projectClient = (baseUrl: string, token: string, protocol: Protocol = "grpc") => client(PlatformProjects, baseUrl, token, protocol);
export const orgClient = (baseUrl: string, token: string, protocol: Protocol = "grpc") => client(PlatformOrganizations, baseUrl, token, protocol);

export async function createProject(baseUrl: string, token: string, name: string, orgId?: string): Promise<string> {
  const made = await projectClient(baseUrl, token).ok("CreateProject", { project: { name }, ...(orgId && { ctx: { orgId } }) });
  return made.details.id as string;
}

/** A minimal valid OIDC configuration (code flow, https redirect), with overrides. */
export const oidc = (extra: JsonObject = {}): JsonObject => ({ redirectUris: ["https://app.example/cb"], responseTypes: [CODE], ...extra });

/** Every GetApp default of an OIDC app created from `oidc(extra)`. */
export const oidcDefaults = (extra: JsonObject = {}): JsonObject => ({
  redirectUris: ["https://app.example/cb"],
  responseTypes: [CODE],
  grantTypes: [AUTH_CODE],
  appType: WEB,
  authMethodType: BASIC,
  accessTokenType: BEARER,
  clockSkew: "0s",
  ...extra,
});

/** The stored row of an application, straight from the table. */
export async function appRow(server: TestServer, id: string) {
  return server.service.store.db.selectFrom("apps").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Every event payload of the database as text. */
export async function allPayloads(server: TestServer): Promise<string> {
  const rows = await server.service.store.db.selectFrom("events").select("payload").execute();
  return rows.map((r) => JSON.stringify(r.payload)).join("\n");
}

/** Events of one application, in order. */
export async function appEvents(server: TestServer, id: string) {
  return server.service.store.db
    .selectFrom("events")
    .select(["aggregate_type", "sequence", "event_type", "payload"])
    .where("aggregate_id", "=", id)
    .orderBy("position")
    .execute();
}

export { hashToken };

export { createOrg, type Client };
