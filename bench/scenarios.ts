import { randomBytes } from "node:crypto";
import { PlatformActions } from "../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { grpcRequest } from "./load-grpc.js";
import type { Http1Request } from "./load-http1.js";
import type { Http2Request } from "./load-http2.js";
import { SEARCH_LIMIT } from "./settings.js";

/** How one scenario is called over each protocol, and on the baseline. */
export interface Scenario {
  name: string;
  rest: Http1Request;
  connect: Http1Request;
  grpc: Http2Request;
  baselineHttp1: Http1Request;
  baselineHttp2: Http2Request;
}

export interface ScenarioContext {
  /** Ids of the seeded targets; GetTarget cycles through them. */
  ids: string[];
  /** Host and Authorization for the service. */
  headers: { host: string; authorization: string };
}

const SERVICE = "/platform.resources.action.v3alpha.PlatformActions";
const HOOK = "https://example.com/hook";
const run = randomBytes(3).toString("hex");
let sequence = 0;
/** Target names are unique across warm-ups, runs and protocols: the name is a unique key. */
const uniqueName = (label: string) => `${label}-${run}-${sequence++}`;

export function scenarios({ ids, headers }: ScenarioContext): Scenario[] {
  const json = { ...headers, "content-type": "application/json" };
  const connectJson = { ...json, "connect-protocol-version": "1" };
  const idOf = (n: number) => ids[n % ids.length]!;
  const post = (path: string, h: Record<string, string>, body: unknown) =>
    ({ method: "POST", path, headers: h, body: JSON.stringify(body) }) as const;

  return [
    {
      name: "GetTarget",
      rest: (n) => ({ method: "GET", path: `/resources/v3alpha/targets/${idOf(n)}`, headers }),
      connect: (n) => post(`${SERVICE}/GetTarget`, connectJson, { id: idOf(n) }),
      grpc: (n) => grpcRequest(PlatformActions.method.getTarget, { id: idOf(n) }, headers.authorization),
      baselineHttp1: (n) => ({ method: "GET", path: `/targets/${idOf(n)}`, headers: {} }),
      baselineHttp2: (n) => ({ method: "GET", path: `/targets/${idOf(n)}` }),
    },
    {
      name: "SearchTargets",
      rest: () => post(`/resources/v3alpha/targets/_search?query.limit=${SEARCH_LIMIT}`, json, []),
      connect: () => post(`${SERVICE}/SearchTargets`, connectJson, { query: { limit: SEARCH_LIMIT } }),
      grpc: () => grpcRequest(PlatformActions.method.searchTargets, { query: { limit: SEARCH_LIMIT } }, headers.authorization),
      baselineHttp1: () => post("/targets/_search", { "content-type": "application/json" }, []),
      baselineHttp2: () => ({ method: "POST", path: "/targets/_search", body: "[]" }),
    },
    {
      name: "CreateTarget",
      rest: () => post("/resources/v3alpha/targets", json, { name: uniqueName("rest"), restWebhook: { url: HOOK }, timeout: "10s" }),
      connect: () =>
        post(`${SERVICE}/CreateTarget`, connectJson, { target: { name: uniqueName("connect"), restWebhook: { url: HOOK }, timeout: "10s" } }),
      grpc: () =>
        grpcRequest(
          PlatformActions.method.createTarget,
          { target: { name: uniqueName("grpc"), targetType: { case: "restWebhook", value: { url: HOOK } }, timeout: { seconds: 10n } } },
          headers.authorization,
        ),
      baselineHttp1: () => post("/targets", { "content-type": "application/json" }, { name: uniqueName("base1"), url: HOOK }),
      baselineHttp2: () => ({ method: "POST", path: "/targets", body: JSON.stringify({ name: uniqueName("base2"), url: HOOK }) }),
    },
  ];
}
