import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { encodeCBOR, type CBORType } from "@levischuck/tiny-cbor";
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";

/**
 * A WebAuthn authenticator in software, for tests without a browser: ES256 (P-256) keys,
 * attestation "none", the client data a browser would add. It answers what the service's
 * options ask, unless a call says otherwise (another origin or challenge, other flags, a
 * counter of its choosing, a wrong signature), so that tests can make every kind of wrong
 * answer. CBOR comes from tiny-cbor, the encoder @simplewebauthn/server itself uses.
 */

/** The authenticator data's flags (WebAuthn §6.1). */
export interface Flags {
  /** User present. */
  up: boolean;
  /** User verified (a PIN, a fingerprint). */
  uv: boolean;
  /** Backup eligible: a passkey that may be synced (multiDevice). */
  be: boolean;
  /** Backed up: synced now. */
  bs: boolean;
}

export interface SoftwareCredential {
  /** The credential id, base64url. */
  id: string;
  rpId: string;
  /** options.user.id at creation, base64url: the userHandle of assertions. */
  userHandle: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The signature counter of the last answer; the next one signs `counter + 1`. Tests may set it. */
  counter: number;
}

/** What a single answer changes from what the options and the authenticator's defaults say. */
export interface AnswerOverrides {
  origin?: string;
  challenge?: string;
  flags?: Partial<Flags>;
}

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();
const AAGUID = Buffer.alloc(16);

function flagsByte(f: Flags, attested: boolean): number {
  return (f.up ? 0x01 : 0) | (f.uv ? 0x04 : 0) | (f.be ? 0x08 : 0) | (f.bs ? 0x10 : 0) | (attested ? 0x40 : 0);
}

function counterBytes(counter: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(counter);
  return bytes;
}

/** The public key as a COSE_Key map (RFC 9053): EC2, ES256, P-256, x and y. */
function coseKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: "jwk" });
  return encodeCBOR(
    new Map<number, CBORType>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, "base64url"))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, "base64url"))],
    ]),
  );
}

export class SoftwareAuthenticator {
  readonly credentials: SoftwareCredential[] = [];
  private readonly flags: Flags;

  constructor(
    /** The page's origin, as the browser would put it into the client data. */
    readonly origin: string,
    flags: Partial<Flags> = {},
  ) {
    this.flags = { up: true, uv: true, be: false, bs: false, ...flags };
  }

  private clientData(type: "webauthn.create" | "webauthn.get", challenge: string, over: AnswerOverrides): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge: over.challenge ?? challenge, origin: over.origin ?? this.origin, crossOrigin: false }));
  }

  /**
   * navigator.credentials.create(): a new credential for the options' relying party and user;
   * `reuse` answers with a credential made before instead, as an authenticator that ignores
   * excludeCredentials would.
   */
  create(options: PublicKeyCredentialCreationOptionsJSON, over: AnswerOverrides & { reuse?: SoftwareCredential } = {}): RegistrationResponseJSON {
    const rpId = options.rp.id!;
    let credential = over.reuse;
    if (!credential) {
      const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      credential = { id: b64url(randomBytes(32)), rpId, userHandle: options.user.id, privateKey, publicKey, counter: 0 };
      this.credentials.push(credential);
    }
    const rawId = Buffer.from(credential.id, "base64url");
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(rawId.length);
    const flags = { ...this.flags, ...over.flags };
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([flagsByte(flags, true)]),
      counterBytes(credential.counter),
      AAGUID,
      idLength,
      rawId,
      coseKey(credential.publicKey),
    ]);
    const attestationObject = encodeCBOR(
      new Map<string, CBORType>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", new Uint8Array(authData)],
      ]),
    );
    return {
      id: credential.id,
      rawId: credential.id,
      type: "public-key",
      response: {
        clientDataJSON: b64url(this.clientData("webauthn.create", options.challenge, over)),
        attestationObject: b64url(attestationObject),
        transports: ["internal"],
      },
      clientExtensionResults: {},
    };
  }

  /**
   * navigator.credentials.get(): an assertion by `credential`, else by the first credential of
   * the relying party the options allow (any, when they allow none: a discoverable passkey).
   * It signs `counter` when given, else the credential's counter plus one.
   */
  get(
    options: PublicKeyCredentialRequestOptionsJSON,
    over: AnswerOverrides & { credential?: SoftwareCredential; counter?: number; wrongSignature?: boolean } = {},
  ): AuthenticationResponseJSON {
    const rpId = options.rpId!;
    const allowed = (options.allowCredentials ?? []).map((c) => c.id);
    const credential =
      over.credential ??
      this.credentials.find((c) => c.rpId === rpId && (allowed.length === 0 || allowed.includes(c.id))) ??
      fail(`no credential for ${rpId} among ${allowed.join(", ") || "any"}`);
    credential.counter = over.counter ?? credential.counter + 1;
    const flags = { ...this.flags, ...over.flags };
    const authData = Buffer.concat([sha256(rpId), Buffer.from([flagsByte(flags, false)]), counterBytes(credential.counter)]);
    const clientDataJSON = this.clientData("webauthn.get", options.challenge, over);
    // A well-formed signature by another key: only its verification can tell it is wrong.
    const key = over.wrongSignature ? generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey : credential.privateKey;
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientDataJSON)]), key);
    return {
      id: credential.id,
      rawId: credential.id,
      type: "public-key",
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
    };
  }
}

function fail(message: string): never {
  throw new Error(message);
}
