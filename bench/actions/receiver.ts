/**
 * A target for benchmarks, in a process of its own so that it takes no CPU from the load
 * generator: answers every POST with 200 and `{}`, counts them, and tells the count at
 * GET /count. Listens on RECEIVER_PORT of 127.0.0.1.
 */
import http from "node:http";
import { HOST } from "../settings.js";

let received = 0;
const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/count") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ received }));
    return;
  }
  req.resume();
  req.on("end", () => {
    received++;
    res.writeHead(200, { "content-type": "application/json", "content-length": "2" }).end("{}");
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.RECEIVER_PORT), HOST, () => process.stdout.write("ready\n"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
