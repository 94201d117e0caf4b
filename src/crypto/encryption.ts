import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";

const VERSION = "v1";

/** AES-256-GCM under the master key, for secrets the service must read back (signing keys). */
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterKey: string) {
    this.key = Buffer.from(masterKey, "utf8");
    if (this.key.length !== 32) throw new Error("the master key must be exactly 32 bytes");
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, iv, tag, data].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, data] = sealed.split(".");
    if (version !== VERSION || !iv || !tag || data === undefined) {
      throw new Error("unknown secret format");
    }
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8");
  }

  /**
   * A key for one purpose (cookie signing of an instance, …), derived from the master key so
   * that every process has the same one and none of them reveals the master key.
   */
  derive(purpose: string): string {
    return createHmac("sha256", this.key).update(purpose).digest("base64url");
  }
}
