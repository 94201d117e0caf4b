import net from "node:net";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { PlatformActions } from "../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { closedLoop, type Measurement } from "./measure.js";
import { CONNECTIONS, HOST, REQUEST_TIMEOUT_MS } from "./settings.js";

export type ActionsClient = Client<typeof PlatformActions>;
export type GrpcCall = (client: ActionsClient, n: number, headers: Record<string, string>) => Promise<unknown>;

export interface GrpcConnection {
  client: ActionsClient;
  close(): void;
}

/**
 * gRPC over one HTTP/2 connection to 127.0.0.1; the :authority stays localhost:<port>,
 * which selects the bootstrapped instance.
 */
export function connectGrpc(port: number): GrpcConnection {
  const baseUrl = `http://localhost:${port}`;
  const sessionManager = new Http2SessionManager(baseUrl, undefined, {
    createConnection: () => net.connect(port, HOST),
  });
  const transport = createGrpcTransport({ baseUrl, sessionManager });
  return { client: createClient(PlatformActions, transport), close: () => sessionManager.abort() };
}

/** CONNECTIONS concurrent calls on the connection; a call succeeds when it resolves. */
export function loadGrpc(
  connection: GrpcConnection,
  call: GrpcCall,
  headers: Record<string, string>,
  seconds: number,
): Promise<Measurement> {
  return closedLoop(CONNECTIONS, seconds, async (n) => {
    await call(connection.client, n, headers);
    return true;
  });
}

export const callOptions = (headers: Record<string, string>) => ({ headers, timeoutMs: REQUEST_TIMEOUT_MS });
