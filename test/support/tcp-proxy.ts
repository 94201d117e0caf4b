import net from "node:net";

type ProxyMode = "pass" | "refuse" | "swallow";

/**
 * A TCP proxy between the service and its database that a test can turn into a fault:
 * `refuse` closes new connections at once, `swallow` accepts and forwards nothing (a
 * network that drops packets), `cut()` ends every open connection.
 */
export interface TcpProxy {
  port: number;
  mode: ProxyMode;
  cut(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const proxy: TcpProxy = {
    port: 0,
    mode: "pass",
    cut() {
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        proxy.cut();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((client) => {
    track(client);
    if (proxy.mode === "refuse") return client.destroy();
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    // Both directions go through here, so that switching to swallow also stalls old connections.
    client.on("data", (chunk) => proxy.mode !== "swallow" && upstream.write(chunk));
    upstream.on("data", (chunk) => proxy.mode !== "swallow" && client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.port = (server.address() as net.AddressInfo).port;
  return proxy;
}
