/**
 * The password login's baseline: the service's own PasswordHasher (src/crypto/passwords.ts)
 * verifying one Argon2id hash of the bench's cost (settings.ts ARGON2, what the service is
 * started with) at LOGIN_CONCURRENCY, in a child process of its own so that its CPU is
 * measured like the service's. Prints `ready`, then for each line `<seconds>` on stdin one
 * JSON Measurement line.
 */
import { createInterface } from "node:readline";
import { createPasswordHasher } from "../../src/crypto/passwords.js";
import { closedLoop } from "../measure.js";
import { ARGON2, USER_PASSWORD } from "../settings.js";
import { LOGIN_CONCURRENCY } from "./login.js";

const hasher = createPasswordHasher(ARGON2);
const encoded = await hasher.hash(USER_PASSWORD);
process.stdout.write("ready\n");
for await (const line of createInterface({ input: process.stdin })) {
  const seconds = Number(line);
  if (!(seconds > 0)) break;
  const measured = await closedLoop(LOGIN_CONCURRENCY, seconds, async () => (await hasher.verify(encoded, USER_PASSWORD)).ok);
  process.stdout.write(`${JSON.stringify(measured)}\n`);
}
