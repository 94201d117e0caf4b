import type { DescService, JsonObject } from "@bufbuild/protobuf";
import { protocolClient } from "../support/clients.js";
import { okMessage, type Msg } from "../support/results.js";
import type { TestServer } from "../support/server.js";
import { namesSecret } from "./secret-names.js";

/**
 * What the flows of the redaction's coverage test share: calls that must succeed, and the
 * secrets they sent or were answered, which no event of the audit log may show.
 */
export interface Flow {
  server: TestServer;
  /** The answer of a call with the administrator's token (or `token`); fails the test otherwise. Secrets in it are remembered. */
  ok(service: DescService, method: string, request: JsonObject, token?: string): Promise<Msg>;
  /** Remembers secrets sent (passwords, client secrets, tokens from a redirect). */
  keep(...secrets: string[]): void;
  readonly secrets: ReadonlySet<string>;
}

/** A service's calls in a flow: `calls(f, PlatformUsers)("GetUser", { id })`. */
export const calls = (f: Flow, service: DescService) => (method: string, request: JsonObject, token?: string) => f.ok(service, method, request, token);

/** Answer fields that carry a secret although the pattern of secret names misses them. */
const ANSWERED_SECRET = /Pat$|keyFile|signingKey/;

/**
 * Shorter values are left out: a six-digit TOTP code could occur in any ID by chance, and
 * the secret it comes from is remembered.
 */
const MIN_LENGTH = 8;

export function newFlow(server: TestServer): Flow {
  const secrets = new Set<string>();
  const keep = (...values: string[]) => {
    for (const value of values) if (value.length >= MIN_LENGTH) secrets.add(value);
  };
  const answered = (value: unknown, secretField = false): void => {
    if (typeof value === "string") {
      if (!secretField) return;
      keep(value);
      // A key file holds the private key: remembered on its own too.
      if (value.startsWith("{")) keep(String((JSON.parse(value) as { key?: string }).key ?? ""));
    } else if (Array.isArray(value)) {
      for (const item of value) answered(item, secretField);
    } else if (typeof value === "object" && value !== null) {
      for (const [name, field] of Object.entries(value)) answered(field, namesSecret(name) || ANSWERED_SECRET.test(name));
    }
  };
  return {
    server,
    secrets,
    keep,
    async ok(service, method, request, token = server.adminToken) {
      const answer = okMessage(await protocolClient(service, "grpc", server.baseUrl).call(method, request, token));
      answered(answer);
      return answer;
    },
  };
}
