import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { KeyType, type GetKey, type Key } from "../../../gen/platform/resources/user/v3alpha/credential_pb.js";
import type { ObjectDetails } from "../../domain/details.js";
import { keyMaterial, type KeyMaterial } from "../../domain/key-material.js";
import { detailsToProto } from "./convert.js";

/** Keys of users and of applications share their messages (platform.resources.user.v3alpha.Key, GetKey). */
const KEY_TYPES: Record<"rsa" | "ec", KeyType> = { rsa: KeyType.RSA, ec: KeyType.EC };

/** The key pair a Key message asks for (generated here, before any transaction) and its expiration. */
export async function keyFromProto(key: Key): Promise<{ material: KeyMaterial; expiresAt: Date }> {
  const { source, expirationDate } = key;
  const material = await keyMaterial(source.case === "generate" ? { generate: source.value === KeyType.EC ? "ec" : "rsa" } : { publicKey: source.value! });
  return { material, expiresAt: timestampDate(expirationDate!) };
}

export function keyToProto(k: { details: ObjectDetails; expiresAt: Date; publicKey: string; type: "rsa" | "ec" }): Omit<GetKey, "$typeName"> {
  return { details: detailsToProto(k.details), expirationDate: timestampFromDate(k.expiresAt), publicKey: k.publicKey, type: KEY_TYPES[k.type] };
}
