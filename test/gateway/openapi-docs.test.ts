import { create, createFileRegistry, setExtension } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, MethodOptionsSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { file_google_api_annotations, http } from "../../gen/google/api/annotations_pb.js";
import { HttpRuleSchema } from "../../gen/google/api/http_pb.js";
import { PROTO_COMMENTS } from "../../gen/platform/comments.js";
import { file_platform_options_v1_options, method as methodRules, MethodRulesSchema } from "../../gen/platform/options/v1/options_pb.js";
import { openApiDocument } from "../../src/gateway/openapi.js";
import { routesOf } from "../../src/gateway/routes.js";
import { PLATFORM_SERVICES } from "../../src/rpc/services/index.js";

type Schema = Record<string, unknown> & { description?: string; properties?: Record<string, Schema> };
interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Schema[];
  "x-permission"?: string;
}
interface Document {
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, Schema>; schemas: Record<string, Schema> };
}

const info = { title: "test", version: "1" };
const document = openApiDocument(routesOf(PLATFORM_SERVICES), info) as unknown as Document;
const operations = Object.values(document.paths).flatMap((byMethod) => Object.values(byMethod));

describe("the OpenAPI document, documented from the proto comments", () => {
  it("declares the bearer token as a security scheme", () => {
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer", description: expect.any(String) });
  });

  it("gives every operation a summary, a description, one service tag and its security", () => {
    expect(operations.length).toBeGreaterThanOrEqual(methodCount());
    const tagNames = document.tags.map((t) => t.name);
    for (const op of operations) {
      expect(op.summary, op.operationId).toMatch(/\S/);
      expect(op.description, op.operationId).toContain(op.summary);
      expect(op.tags, op.operationId).toHaveLength(1);
      expect(tagNames).toContain(op.tags![0]);
      // Every method of ours needs a token: with a named permission, one that carries it.
      if (op["x-permission"] === "authenticated") {
        expect(op.security, op.operationId).toEqual([{ bearer: [] }]);
        expect(op.description).toContain("Needs any valid token.");
      } else {
        expect(op.security, op.operationId).toEqual([{ bearer: [op["x-permission"]] }]);
        expect(op.description).toContain(`\`${op["x-permission"]}\``);
      }
    }
    const create = operations.find((op) => op.operationId === "PlatformActions_CreateTarget")!;
    expect(create.summary).toBe("Creates a target; the response carries its signing key, shown only here.");
  });

  it("has one tag per service, described", () => {
    expect(document.tags).toEqual([
      { name: "PlatformActions", description: PROTO_COMMENTS["platform.resources.action.v3alpha.PlatformActions"] },
      { name: "PlatformApps", description: PROTO_COMMENTS["platform.resources.app.v3alpha.PlatformApps"] },
      { name: "PlatformAuthRequests", description: PROTO_COMMENTS["platform.resources.oidc.v3alpha.PlatformAuthRequests"] },
      { name: "PlatformBrandingSettings", description: PROTO_COMMENTS["platform.settings.branding.v3alpha.PlatformBrandingSettings"] },
      { name: "PlatformDomainSettings", description: PROTO_COMMENTS["platform.settings.domain.v3alpha.PlatformDomainSettings"] },
      { name: "PlatformDomains", description: PROTO_COMMENTS["platform.resources.domain.v3alpha.PlatformDomains"] },
      { name: "PlatformEvents", description: PROTO_COMMENTS["platform.resources.event.v3alpha.PlatformEvents"] },
      { name: "PlatformFeatureSettings", description: PROTO_COMMENTS["platform.settings.feature.v3alpha.PlatformFeatureSettings"] },
      { name: "PlatformGrants", description: PROTO_COMMENTS["platform.resources.grant.v3alpha.PlatformGrants"] },
      { name: "PlatformIDPIntents", description: PROTO_COMMENTS["platform.resources.idp_intent.v3alpha.PlatformIDPIntents"] },
      { name: "PlatformIdentityProviders", description: PROTO_COMMENTS["platform.resources.idp.v3alpha.PlatformIdentityProviders"] },
      { name: "PlatformInstances", description: PROTO_COMMENTS["platform.resources.instance.v3alpha.PlatformInstances"] },
      { name: "PlatformLanguageSettings", description: PROTO_COMMENTS["platform.settings.language.v3alpha.PlatformLanguageSettings"] },
      { name: "PlatformLoginSettings", description: PROTO_COMMENTS["platform.settings.login.v3alpha.PlatformLoginSettings"] },
      { name: "PlatformMemberships", description: PROTO_COMMENTS["platform.resources.membership.v3alpha.PlatformMemberships"] },
      { name: "PlatformMessageTextSettings", description: PROTO_COMMENTS["platform.settings.message_text.v3alpha.PlatformMessageTextSettings"] },
      { name: "PlatformNotifications", description: PROTO_COMMENTS["platform.resources.notification.v3alpha.PlatformNotifications"] },
      { name: "PlatformOrganizations", description: PROTO_COMMENTS["platform.resources.org.v3alpha.PlatformOrganizations"] },
      { name: "PlatformProjects", description: PROTO_COMMENTS["platform.resources.project.v3alpha.PlatformProjects"] },
      { name: "PlatformSMSProviders", description: PROTO_COMMENTS["platform.resources.sms_provider.v3alpha.PlatformSMSProviders"] },
      { name: "PlatformSMTPProviders", description: PROTO_COMMENTS["platform.resources.smtp_provider.v3alpha.PlatformSMTPProviders"] },
      { name: "PlatformSessions", description: PROTO_COMMENTS["platform.resources.session.v3alpha.PlatformSessions"] },
      { name: "PlatformUserSchemas", description: PROTO_COMMENTS["platform.resources.user_schema.v3alpha.PlatformUserSchemas"] },
      { name: "PlatformUsers", description: PROTO_COMMENTS["platform.resources.user.v3alpha.PlatformUsers"] },
    ]);
  });

  it("describes every schema, every property and every parameter", () => {
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      expect(schema.description, name).toMatch(/\S/);
      for (const [property, value] of Object.entries(schema.properties ?? {})) expect(value.description, `${name}.${property}`).toMatch(/\S/);
    }
    for (const op of operations) for (const p of op.parameters ?? []) expect(p.description, `${op.operationId} ${String(p.name)}`).toMatch(/\S/);
    const target = document.components.schemas["platform.resources.action.v3alpha.Target"]!;
    expect(target.properties!.name!.description).toBe("Name of the target, unique in the instance.");
    // A message-typed field keeps its $ref and gets the field's own words beside it.
    expect(target.properties!.restWebhook).toMatchObject({ $ref: expect.any(String), description: expect.stringContaining("webhook") });
  });

  it("marks a public operation with an empty security requirement", () => {
    const options = create(MethodOptionsSchema);
    setExtension(options, http, create(HttpRuleSchema, { pattern: { case: "get", value: "/ping" } }));
    setExtension(options, methodRules, create(MethodRulesSchema, { permission: "public" }));
    const file = create(FileDescriptorProtoSchema, {
      name: "platform/test/v1/ping.proto",
      package: "platform.test.v1",
      syntax: "proto3",
      dependency: ["google/api/annotations.proto", "platform/options/v1/options.proto"],
      messageType: [{ name: "PingRequest" }, { name: "PingResponse" }],
      service: [
        { name: "PlatformPing", method: [{ name: "Ping", inputType: ".platform.test.v1.PingRequest", outputType: ".platform.test.v1.PingResponse", options }] },
      ],
    });
    const imports = new Map([
      ["google/api/annotations.proto", file_google_api_annotations],
      ["platform/options/v1/options.proto", file_platform_options_v1_options],
    ]);
    const service = createFileRegistry(file, (name) => imports.get(name)).getService("platform.test.v1.PlatformPing")!;
    const doc = openApiDocument(routesOf([service]), info) as unknown as Document;
    expect(doc.paths["/ping"]!.get!.security).toEqual([]);
    expect(doc.paths["/ping"]!.get!.description).toBe("Public: no token needed.");
  });
});

/** Each RPC has one HTTP rule at least. */
function methodCount(): number {
  return PLATFORM_SERVICES.reduce((n, s) => n + s.methods.length, 0);
}
