import { spawn } from "node:child_process";
import { create, fromBinary, toBinary, type DescFile } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, CodeGeneratorResponseSchema, FileDescriptorProtoSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { PROTO_COMMENTS } from "../../gen/platform/comments.js";
import { file_platform_resources_action_v3alpha_action_service } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PLATFORM_SERVICES } from "../../src/rpc/services/index.js";

/** Runs scripts/protoc-gen-docs.mjs as buf does: a CodeGeneratorRequest on stdin, the response on stdout. */
async function runPlugin(files: FileDescriptorProto[], generate: string[]) {
  const request = create(CodeGeneratorRequestSchema, { fileToGenerate: generate, parameter: "target=ts", protoFile: files });
  const child = spawn(process.execPath, ["scripts/protoc-gen-docs.mjs"], { stdio: ["pipe", "pipe", "pipe"] });
  const stdout: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(toBinary(CodeGeneratorRequestSchema, request));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const response = code === 0 ? fromBinary(CodeGeneratorResponseSchema, Buffer.concat(stdout)) : undefined;
  return { code, stderr, response };
}

/** A file and everything it imports, imports first (as protoc sends them). */
function withImports(file: DescFile, out = new Map<string, FileDescriptorProto>()): FileDescriptorProto[] {
  for (const dep of file.dependencies) withImports(dep, out);
  out.set(file.proto.name, file.proto);
  return [...out.values()];
}

const comment = (path: number[], text: string) => ({ path, span: [0, 0, 0], leadingComments: ` ${text}\n` });

/** A file of ours with one service, one RPC, one message and one field; `skip` leaves one comment out. */
function tinyProto(skip?: string): FileDescriptorProto {
  const locations = [
    ["service", comment([6, 0], "Says hello.")],
    ["rpc", comment([6, 0, 2, 0], "Greets.\n More about greeting.")],
    ["message", comment([4, 0], "A greeting.")],
    ["field", comment([4, 0, 2, 0], "Whom to greet.")],
  ] as const;
  return create(FileDescriptorProtoSchema, {
    name: "platform/hello/v1/hello.proto",
    package: "platform.hello.v1",
    syntax: "proto3",
    messageType: [{ name: "Hello", field: [{ name: "name", number: 1, type: 9, label: 1, jsonName: "name" }] }],
    service: [{ name: "PlatformHello", method: [{ name: "Greet", inputType: ".platform.hello.v1.Hello", outputType: ".platform.hello.v1.Hello" }] }],
    sourceCodeInfo: { location: locations.filter(([kind]) => kind !== skip).map(([, l]) => l) },
  });
}

describe("scripts/protoc-gen-docs.mjs", () => {
  it("writes the comments of our protos into one module, keyed by full name", async () => {
    const { code, stderr, response } = await runPlugin([tinyProto()], ["platform/hello/v1/hello.proto"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(response!.file.map((f) => f.name)).toEqual(["platform/comments.ts"]);
    const text = response!.file[0]!.content;
    expect(text).toContain('"platform.hello.v1.PlatformHello": "Says hello.",');
    expect(text).toContain('"platform.hello.v1.PlatformHello.Greet": "Greets. More about greeting.",');
    expect(text).toContain('"platform.hello.v1.Hello": "A greeting.",');
    expect(text).toContain('"platform.hello.v1.Hello.name": "Whom to greet.",');
  });

  it.each(["service", "rpc", "message", "field"])("fails, naming it, when a %s has no comment", async (skip) => {
    const { code, stderr } = await runPlugin([tinyProto(skip)], ["platform/hello/v1/hello.proto"]);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/needs a comment/);
    const missing = { service: "PlatformHello", rpc: "PlatformHello.Greet", message: "Hello", field: "Hello.name" }[skip];
    expect(stderr).toContain(`platform/hello/v1/hello.proto: platform.hello.v1.${missing}`);
  });

  it("fails on our real protos when their comments are stripped (the generated descriptors carry none)", async () => {
    const files = withImports(file_platform_resources_action_v3alpha_action_service);
    const { code, stderr } = await runPlugin(
      files,
      files.map((f) => f.name).filter((n) => n.startsWith("platform/")),
    );
    expect(code).not.toBe(0);
    expect(stderr).toContain("platform.resources.action.v3alpha.PlatformActions.CreateTarget");
  });

  it("the committed module documents every RPC and every field our services reach", () => {
    const seen = new Set<string>();
    const missing: string[] = [];
    const need = (key: string) => PROTO_COMMENTS[key] || missing.push(key);
    const walk = (message: { typeName: string; fields: { name: string; message?: unknown }[] }) => {
      if (seen.has(message.typeName) || !message.typeName.startsWith("platform.")) return;
      seen.add(message.typeName);
      need(message.typeName);
      for (const field of message.fields) {
        need(`${message.typeName}.${field.name}`);
        if (field.message) walk(field.message as typeof message);
      }
    };
    for (const service of PLATFORM_SERVICES) {
      need(service.typeName);
      for (const method of service.methods) {
        need(`${service.typeName}.${method.name}`);
        walk(method.input);
        walk(method.output);
      }
    }
    expect(missing).toEqual([]);
    expect(seen.size).toBeGreaterThan(20);
  });
});
