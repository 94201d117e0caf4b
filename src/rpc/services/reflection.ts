import {
  create,
  createFileRegistry,
  fromBinary,
  toBinary,
  type DescFile,
  type DescMessage,
  type DescService,
  type FileRegistry,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import {
  ServerReflection as ServerReflectionV1,
  ServerReflectionRequestSchema as RequestV1,
  ServerReflectionResponseSchema as ResponseV1,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import {
  ServerReflection as ServerReflectionV1alpha,
  ServerReflectionRequestSchema as RequestV1alpha,
  ServerReflectionResponseSchema as ResponseV1alpha,
} from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";

type Answer = MessageInitShape<typeof ResponseV1>["messageResponse"];

/**
 * gRPC server reflection (grpc.reflection.v1 and the v1alpha that older tools still
 * call) over the descriptors of `services` and everything they import.
 */
export function reflectionServices(services: readonly DescService[]): {
  v1: ServiceImpl<typeof ServerReflectionV1>;
  v1alpha: ServiceImpl<typeof ServerReflectionV1alpha>;
} {
  const registry = fileRegistry(services);
  const serviceNames = services.map((s) => ({ name: s.typeName }));

  // One per stream: clients keep the files they were sent for the life of the stream.
  function session(): (req: ServerReflectionRequest) => ServerReflectionResponse {
    const sent = new Set<string>();

    // The requested file always goes out; of its imports only those this stream has not had yet.
    const files = (file: DescFile | undefined, what: string): Answer => {
      if (!file) return notFound(what);
      const out: Uint8Array[] = [];
      const visit = (f: DescFile, requested: boolean) => {
        if (sent.has(f.proto.name) && !requested) return;
        sent.add(f.proto.name);
        out.push(toBinary(FileDescriptorProtoSchema, f.proto));
        for (const dep of f.dependencies) visit(dep, false);
      };
      visit(file, true);
      return { case: "fileDescriptorResponse", value: { fileDescriptorProto: out } };
    };

    const answer = (req: ServerReflectionRequest["messageRequest"]): Answer => {
      switch (req.case) {
        case "listServices":
          return { case: "listServicesResponse", value: { service: serviceNames } };
        case "fileByFilename":
          return files(registry.getFile(req.value), `file ${req.value}`);
        case "fileContainingSymbol":
          return files(symbolFile(registry, req.value), `symbol ${req.value}`);
        case "fileContainingExtension": {
          const { containingType, extensionNumber } = req.value;
          const extendee = registry.getMessage(containingType);
          const extension = extendee && registry.getExtensionFor(extendee, extensionNumber);
          return files(extension?.file, `extension ${extensionNumber} of ${containingType}`);
        }
        case "allExtensionNumbersOfType": {
          if (!registry.getMessage(req.value)) return notFound(`type ${req.value}`);
          const numbers = [...registry].flatMap((d) => (d.kind === "extension" && d.extendee.typeName === req.value ? [d.number] : []));
          return { case: "allExtensionNumbersResponse", value: { baseTypeName: req.value, extensionNumber: numbers } };
        }
        default:
          return { case: "errorResponse", value: { errorCode: Code.Unimplemented, errorMessage: "unsupported request" } };
      }
    };

    return (req) => create(ResponseV1, { validHost: req.host, originalRequest: req, messageResponse: answer(req.messageRequest) });
  }

  return {
    v1: {
      async *serverReflectionInfo(requests) {
        const respond = session();
        for await (const req of requests) yield respond(req);
      },
    },
    v1alpha: {
      async *serverReflectionInfo(requests) {
        const respond = session();
        for await (const req of requests) {
          yield convert(ResponseV1, respond(convert(RequestV1alpha, req, RequestV1)), ResponseV1alpha);
        }
      },
    },
  };
}

/** Registries are built from descriptor sets, whose files must come after their imports. */
function fileRegistry(services: readonly DescService[]): FileRegistry {
  const files = new Map<string, FileDescriptorProto>();
  const add = (file: DescFile) => {
    if (files.has(file.proto.name)) return;
    file.dependencies.forEach(add);
    files.set(file.proto.name, file.proto);
  };
  services.forEach((s) => add(s.file));
  return createFileRegistry(create(FileDescriptorSetSchema, { file: [...files.values()] }));
}

function symbolFile(registry: FileRegistry, name: string): DescFile | undefined {
  const desc = registry.get(name);
  if (desc) return desc.file;
  // Methods are not registry entries; they are found through their service.
  const dot = name.lastIndexOf(".");
  const service = dot > 0 ? registry.getService(name.slice(0, dot)) : undefined;
  return service?.methods.some((m) => m.name === name.slice(dot + 1)) ? service.file : undefined;
}

function notFound(what: string): Answer {
  return { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: `${what} not found` } };
}

/** v1alpha and v1 messages are the same on the wire. */
function convert<From extends DescMessage, To extends DescMessage>(from: From, message: MessageShape<From>, to: To): MessageShape<To> {
  return fromBinary(to, toBinary(from, message));
}
