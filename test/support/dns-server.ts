import dns2 from "dns2";

const { Packet } = dns2;

/**
 * A DNS server for tests on a free UDP port of 127.0.0.1 (dns2): answers the TXT records and
 * IPv4 addresses a test sets, NXDOMAIN for any other name, and nothing at all for the names
 * in `silent` (a server that does not answer in time).
 */
export class TestDnsServer {
  /** TXT records by name, each record one string. */
  readonly txt = new Map<string, string[]>();
  /** IPv4 address by name. */
  readonly a = new Map<string, string>();
  readonly silent = new Set<string>();
  /** The names asked for, in order. */
  readonly asked: string[] = [];
  #server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0];
      if (!question) return void send(response);
      const name = question.name.toLowerCase();
      this.asked.push(name);
      if (this.silent.has(name)) return;
      const records = this.txt.get(name);
      const address = this.a.get(name);
      if (question.type === Packet.TYPE.TXT && records) {
        for (const data of records)
          response.answers.push(Packet.createResourceFromQuestion(question, { type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data }));
      } else if (question.type === Packet.TYPE.A && address) {
        response.answers.push(Packet.createResourceFromQuestion(question, { type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 1, address }));
      } else if (!records && !address) {
        response.header.rcode = 3; // NXDOMAIN
      }
      void send(response);
    },
  });
  port = 0;

  /** Starts it; answers `127.0.0.1:<port>` for PLATFORM_DNS_SERVERS. */
  async start(): Promise<string> {
    const addresses = await this.#server.listen({ udp: { port: 0, address: "127.0.0.1" } });
    this.port = addresses.udp!.port;
    return `127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    return this.#server.close();
  }
}
