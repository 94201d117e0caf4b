import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * A real OpenLDAP for the LDAP tests: Debian's slapd in a temporary directory, with a CA of
 * its own (openssl) whose certificate the tests give providers as rootCa, on free ports for
 * ldap:// (with StartTLS) and ldaps://. Where slapd is missing the tests skip, saying so.
 */

const SLAPD = process.env.SLAPD_PATH ?? "/usr/sbin/slapd";
const SLAPADD = join(SLAPD, "..", "slapadd");
export const HAS_SLAPD = existsSync(SLAPD) && existsSync(SLAPADD);
export const SLAPD_SKIP = `(skipped: ${SLAPD} is missing; apt-get install slapd)`;

const run = promisify(execFile);

export const BASE_DN = "dc=example,dc=org";
export const BIND_DN = `cn=admin,${BASE_DN}`;
export const BIND_PASSWORD = "bind-s3cret";

/** The mapping of the entries startSlapd writes (inetOrgPerson) onto the external profile. */
export const LDAP_ATTRIBUTES = {
  idAttribute: "uid",
  usernameAttribute: "uid",
  emailAttribute: "mail",
  firstNameAttribute: "givenName",
  lastNameAttribute: "sn",
  preferredLanguageAttribute: "preferredLanguage",
  phoneAttribute: "telephoneNumber",
};

export interface Person {
  uid: string;
  cn: string;
  givenName: string;
  sn: string;
  mail: string;
  password: string;
  preferredLanguage?: string;
  telephoneNumber?: string;
}

export interface Directory {
  ldapUrl: string;
  ldapsUrl: string;
  /** The CA that signed the server's certificate (for 127.0.0.1 and localhost). */
  caPem: string;
  /** slapd's process, for its CPU time (bench/ldap-sign-in.ts). */
  pid: number | undefined;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function certificates(dir: string): Promise<void> {
  const o = (...args: string[]) => run("openssl", args, { cwd: dir });
  await o("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=LDAP test CA");
  await o("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost");
  await writeFile(join(dir, "san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n");
  await o(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "san.cnf",
  );
}

/** A CA of its own that signed nothing of the directory's: trusting it alone, a client must refuse the server. */
export async function anotherCa(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "other-ca-"));
  try {
    await run("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Another CA"], {
      cwd: dir,
    });
    return await readFile(join(dir, "ca.pem"), "utf8");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const entry = (p: Person) =>
  [
    `dn: cn=${p.cn},ou=people,${BASE_DN}`,
    "objectClass: inetOrgPerson",
    `cn: ${p.cn}`,
    `uid: ${p.uid}`,
    `givenName: ${p.givenName}`,
    `sn: ${p.sn}`,
    `mail: ${p.mail}`,
    `userPassword: ${p.password}`,
    ...(p.preferredLanguage ? [`preferredLanguage: ${p.preferredLanguage}`] : []),
    ...(p.telephoneNumber ? [`telephoneNumber: ${p.telephoneNumber}`] : []),
  ].join("\n");

/** Starts slapd with the people under ou=people; stop() ends it and removes its directory. */
export async function startSlapd(people: Person[]): Promise<Directory> {
  const dir = await mkdtemp(join(tmpdir(), "slapd-"));
  await certificates(dir);
  const conf = join(dir, "slapd.conf");
  await writeFile(
    conf,
    [
      ...["core", "cosine", "inetorgperson"].map((s) => `include /etc/ldap/schema/${s}.schema`),
      "modulepath /usr/lib/ldap",
      "moduleload back_mdb",
      `pidfile ${dir}/slapd.pid`,
      `TLSCACertificateFile ${dir}/ca.pem`,
      `TLSCertificateFile ${dir}/server.pem`,
      `TLSCertificateKeyFile ${dir}/server.key`,
      // An unauthenticated bind (a DN without password) succeeds here, as on many servers:
      // the service must never let an empty password reach a bind.
      "allow bind_anon_cred",
      "database mdb",
      "maxsize 10485760",
      `suffix "${BASE_DN}"`,
      `rootdn "${BIND_DN}"`,
      `rootpw ${BIND_PASSWORD}`,
      `directory ${dir}/data`,
      "access to attrs=userPassword by self write by anonymous auth by * none",
      "access to * by users read by * none",
      "",
    ].join("\n"),
  );
  await run("mkdir", [join(dir, "data")]);
  const ldif = [
    `dn: ${BASE_DN}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example`,
    `dn: ou=people,${BASE_DN}\nobjectClass: organizationalUnit\nou: people`,
    ...people.map(entry),
  ].join("\n\n");
  await writeFile(join(dir, "data.ldif"), `${ldif}\n`);
  await run(SLAPADD, ["-f", conf, "-l", join(dir, "data.ldif")]);
  const [ldapPort, ldapsPort] = [await freePort(), await freePort()];
  const ldapUrl = `ldap://127.0.0.1:${ldapPort}`;
  const ldapsUrl = `ldaps://127.0.0.1:${ldapsPort}`;
  // -d: in the foreground, so that the test owns the process and ends it.
  const child: ChildProcess = spawn(SLAPD, ["-h", `${ldapUrl}/ ${ldapsUrl}/`, "-f", conf, "-d", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`slapd exited (${child.exitCode}): ${stderr}`);
    }
    if ((await accepts(ldapPort)) && (await accepts(ldapsPort))) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`slapd did not listen within 15 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { ldapUrl, ldapsUrl, caPem: await readFile(join(dir, "ca.pem"), "utf8"), pid: child.pid, stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

/** A server that accepts connections and never answers: a directory that hangs. */
export async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `ldap://127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
