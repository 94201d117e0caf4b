import { randomBytes } from "node:crypto";
import { PlatformActions } from "../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PlatformIdentityProviders } from "../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import { PlatformUsers } from "../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PlatformLanguageSettings } from "../gen/platform/settings/language/v3alpha/language_service_pb.js";
import { grpcRequest } from "./load-grpc.js";
import { employeeData } from "./schema-users.js";
import type { Http1Request } from "./load-http1.js";
import type { Http2Request } from "./load-http2.js";
import { SEARCH_LIMIT, USER_PASSWORD } from "./settings.js";

/** How one scenario is called over each protocol, and on the baseline. */
export interface Scenario {
  name: string;
  rest: Http1Request;
  connect: Http1Request;
  grpc: Http2Request;
  baselineHttp1: Http1Request;
  baselineHttp2: Http2Request;
  /** A read whose first answer must be the same JSON from the service's REST gateway and the baseline. */
  sameAnswer?: boolean;
}

export interface ScenarioContext {
  /** Ids of the seeded targets; GetTarget cycles through them. */
  ids: string[];
  /** Ids of the seeded human users; GetUser cycles through them. */
  userIds: string[];
  /** The organization SearchIDPs and ResolveLanguages ask in (bench/service.ts seedReusable). */
  orgId: string;
  /** The 20-field user schema CreateSchemaUser creates users of (bench/schema-users.ts). */
  schemaId: string;
  /** Host and Authorization for the service. */
  headers: { host: string; authorization: string };
}

const SERVICE = "/platform.resources.action.v3alpha.PlatformActions";
const USERS = "/platform.resources.user.v3alpha.PlatformUsers";
const IDPS = "/platform.resources.idp.v3alpha.PlatformIdentityProviders";
const LANGUAGES = "/platform.settings.language.v3alpha.PlatformLanguageSettings";
const HOOK = "https://example.com/hook";
const run = randomBytes(3).toString("hex");
let sequence = 0;
/** Target names and usernames are unique across warm-ups, runs and protocols: each is a unique key. */
const uniqueName = (label: string) => `${label}-${run}-${sequence++}`;

/**
 * A new person with a password, as the REST body (a User) and inside Connect's and the baseline's.
 * The address is verified: an unverified one makes the service issue a verification code and
 * queue its email in the same transaction, work the baseline does not do (`npm run
 * bench:notifications` measures what that message costs).
 */
const newHuman = (username: string) => ({
  username,
  human: { profile: { givenName: "Bench", familyName: "User" }, email: { address: `${username}@example.com`, isVerified: true }, password: USER_PASSWORD },
});

/** The same person as a protobuf message, for gRPC. */
const newHumanMessage = (username: string) => ({
  username,
  type: {
    case: "human" as const,
    value: {
      profile: { givenName: "Bench", familyName: "User" },
      email: { address: `${username}@example.com`, isVerified: true },
      passwordType: { case: "password" as const, value: USER_PASSWORD },
    },
  },
});

/** A user of the 20-field schema, with data unique to its name. */
const newSchemaUser = (schemaId: string, username: string) => ({ username, schema: { schemaId, data: employeeData(sequence) } });

/**
 * Reads first, then searches, then creates: every created target makes SearchTargets'
 * count(*) over() larger, and every created user makes the users table larger.
 */
export function scenarios({ ids, userIds, orgId, schemaId, headers }: ScenarioContext): Scenario[] {
  const json = { ...headers, "content-type": "application/json" };
  const connectJson = { ...json, "connect-protocol-version": "1" };
  const idOf = (n: number) => ids[n % ids.length]!;
  const userIdOf = (n: number) => userIds[n % userIds.length]!;
  const post = (path: string, h: Record<string, string>, body: unknown) => ({ method: "POST", path, headers: h, body: JSON.stringify(body) }) as const;

  return [
    {
      name: "GetTarget",
      sameAnswer: true,
      rest: (n) => ({ method: "GET", path: `/resources/v3alpha/targets/${idOf(n)}`, headers }),
      connect: (n) => post(`${SERVICE}/GetTarget`, connectJson, { id: idOf(n) }),
      grpc: (n) => grpcRequest(PlatformActions.method.getTarget, { id: idOf(n) }, headers.authorization),
      baselineHttp1: (n) => ({ method: "GET", path: `/targets/${idOf(n)}`, headers: {} }),
      baselineHttp2: (n) => ({ method: "GET", path: `/targets/${idOf(n)}` }),
    },
    {
      name: "GetUser",
      sameAnswer: true,
      rest: (n) => ({ method: "GET", path: `/resources/v3alpha/users/${userIdOf(n)}`, headers }),
      connect: (n) => post(`${USERS}/GetUser`, connectJson, { id: userIdOf(n) }),
      grpc: (n) => grpcRequest(PlatformUsers.method.getUser, { id: userIdOf(n) }, headers.authorization),
      baselineHttp1: (n) => ({ method: "GET", path: `/users/${userIdOf(n)}`, headers: {} }),
      baselineHttp2: (n) => ({ method: "GET", path: `/users/${userIdOf(n)}` }),
    },
    {
      name: "SearchTargets",
      sameAnswer: true,
      rest: () => post(`/resources/v3alpha/targets/_search?query.limit=${SEARCH_LIMIT}`, json, []),
      connect: () => post(`${SERVICE}/SearchTargets`, connectJson, { query: { limit: SEARCH_LIMIT } }),
      grpc: () => grpcRequest(PlatformActions.method.searchTargets, { query: { limit: SEARCH_LIMIT } }, headers.authorization),
      baselineHttp1: () => post("/targets/_search", { "content-type": "application/json" }, []),
      baselineHttp2: () => ({ method: "POST", path: "/targets/_search", body: "[]" }),
    },
    {
      name: "SearchIDPs",
      sameAnswer: true,
      rest: () => post(`/resources/v3alpha/idps/_search?ctx.orgId=${orgId}&query.limit=${SEARCH_LIMIT}`, json, []),
      connect: () => post(`${IDPS}/SearchIDPs`, connectJson, { ctx: { orgId }, query: { limit: SEARCH_LIMIT } }),
      grpc: () =>
        grpcRequest(
          PlatformIdentityProviders.method.searchIDPs,
          { ctx: { type: { case: "orgId", value: orgId } }, query: { limit: SEARCH_LIMIT } },
          headers.authorization,
        ),
      baselineHttp1: () => post(`/idps/_search?org=${orgId}`, { "content-type": "application/json" }, []),
      baselineHttp2: () => ({ method: "POST", path: `/idps/_search?org=${orgId}`, body: "[]" }),
    },
    {
      name: "ResolveLanguages",
      sameAnswer: true,
      rest: () => ({ method: "GET", path: `/settings/v3alpha/languages?ctx.orgId=${orgId}`, headers }),
      connect: () => post(`${LANGUAGES}/ResolveLanguages`, connectJson, { ctx: { orgId } }),
      grpc: () => grpcRequest(PlatformLanguageSettings.method.resolveLanguages, { ctx: { type: { case: "orgId", value: orgId } } }, headers.authorization),
      baselineHttp1: () => ({ method: "GET", path: `/languages?org=${orgId}`, headers: {} }),
      baselineHttp2: () => ({ method: "GET", path: `/languages?org=${orgId}` }),
    },
    {
      name: "CreateTarget",
      rest: () => post("/resources/v3alpha/targets", json, { name: uniqueName("rest"), restWebhook: { url: HOOK }, timeout: "10s" }),
      connect: () => post(`${SERVICE}/CreateTarget`, connectJson, { target: { name: uniqueName("connect"), restWebhook: { url: HOOK }, timeout: "10s" } }),
      grpc: () =>
        grpcRequest(
          PlatformActions.method.createTarget,
          { target: { name: uniqueName("grpc"), targetType: { case: "restWebhook", value: { url: HOOK } }, timeout: { seconds: 10n } } },
          headers.authorization,
        ),
      baselineHttp1: () => post("/targets", { "content-type": "application/json" }, { name: uniqueName("base1"), url: HOOK }),
      baselineHttp2: () => ({ method: "POST", path: "/targets", body: JSON.stringify({ name: uniqueName("base2"), url: HOOK }) }),
    },
    {
      name: "CreateUser",
      rest: () => post("/resources/v3alpha/users", json, newHuman(uniqueName("rest"))),
      connect: () => post(`${USERS}/CreateUser`, connectJson, { user: newHuman(uniqueName("connect")) }),
      grpc: () => grpcRequest(PlatformUsers.method.createUser, { user: newHumanMessage(uniqueName("grpc")) }, headers.authorization),
      baselineHttp1: () => post("/users", { "content-type": "application/json" }, newHuman(uniqueName("base1"))),
      baselineHttp2: () => ({ method: "POST", path: "/users", body: JSON.stringify(newHuman(uniqueName("base2"))) }),
    },
    {
      name: "CreateSchemaUser",
      rest: () => post("/resources/v3alpha/users", json, newSchemaUser(schemaId, uniqueName("rest"))),
      connect: () => post(`${USERS}/CreateUser`, connectJson, { user: newSchemaUser(schemaId, uniqueName("connect")) }),
      grpc: () => {
        const user = newSchemaUser(schemaId, uniqueName("grpc"));
        return grpcRequest(
          PlatformUsers.method.createUser,
          { user: { username: user.username, type: { case: "schema", value: user.schema } } },
          headers.authorization,
        );
      },
      baselineHttp1: () => post("/schema_users", { "content-type": "application/json" }, newSchemaUser(schemaId, uniqueName("base1"))),
      baselineHttp2: () => ({ method: "POST", path: "/schema_users", body: JSON.stringify(newSchemaUser(schemaId, uniqueName("base2"))) }),
    },
  ];
}
